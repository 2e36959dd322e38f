import type { Config } from '../config';
import type { Database } from '../store/db';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  config: Config;
  loaders: Loaders;
}

export function createContext(db: Database, config: Config): Context {
  return { db, config, loaders: createLoaders(db) };
}
