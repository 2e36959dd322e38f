import type { Config } from '../config';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embed';
import type { Principal } from '../store/keys';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  config: Config;
  loaders: Loaders;
  /** Encoders and the models they write to; absent when the server runs without encoders. */
  embedding?: EmbeddingTargets;
  /** The API key's holder; absent for a request without a key. */
  principal?: Principal;
}

export function createContext(
  db: Database,
  config: Config,
  embedding?: EmbeddingTargets,
  principal?: Principal,
): Context {
  return { db, config, loaders: createLoaders(db), embedding, principal };
}
