import type { Config } from '../config';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embed';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  config: Config;
  loaders: Loaders;
  /** Encoders and the models they write to; absent when the server runs without encoders. */
  embedding?: EmbeddingTargets;
}

export function createContext(db: Database, config: Config, embedding?: EmbeddingTargets): Context {
  return { db, config, loaders: createLoaders(db), embedding };
}
