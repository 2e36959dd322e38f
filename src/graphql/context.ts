import type { Config } from '../config';
import type { ModelRegistry } from '../pipeline/jobs/registry';
import type { ServerMetrics } from '../observability/metrics';
import type { Database } from '../store/db';
import type { Principal } from '../store/keys';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  config: Config;
  loaders: Loaders;
  /** The active encoders and the models they read and write; absent when the server runs without encoders. */
  models?: ModelRegistry;
  /** The API key's holder; absent for a request without a key. */
  principal?: Principal;
  /** The HTTP server's metrics (retrieve stage timings); absent outside it. */
  metrics?: ServerMetrics;
}

export function createContext(db: Database, config: Config, models?: ModelRegistry, principal?: Principal): Context {
  return { db, config, loaders: createLoaders(db), models, principal };
}
