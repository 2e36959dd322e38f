import type { Config } from '../config';
import type { Database } from '../store/db';
import type { ModelRegistry } from '../jobs/registry';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  config: Config;
  loaders: Loaders;
  /** The active encoders and the models they read and write; absent when the server runs without encoders. */
  models?: ModelRegistry;
}

export function createContext(db: Database, config: Config, models?: ModelRegistry): Context {
  return { db, config, loaders: createLoaders(db), models };
}
