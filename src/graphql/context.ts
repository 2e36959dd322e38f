import type { Config } from '../config';
import type { ModelRegistry } from '../pipeline/jobs/registry';
import type { CorpusSettingsSource } from '../retrieval/settings';
import type { ServerMetrics } from '../observability/metrics';
import { shareOf } from '../store/connection-share';
import type { Database } from '../store/db';
import { defaultSearchLimit } from '../store/search-gate';
import type { Principal } from '../store/keys';
import type { Replica } from '../store/replicas';
import { createLoaders, type Loaders } from './loaders';

export interface Context {
  db: Database;
  /**
   * For an ingest's writes: a share of the pool as large as the searches leave it (half), so the
   * documents it writes side by side (4 at once) do not wait on each other's transactions, one
   * connection at a time (bench:writer-fairness). The same deadline as `db`.
   */
  writes: Database;
  /** The store without this operation's share of the pool and deadline: for work that outlives the request (a tune run). */
  store: Database;
  config: Config;
  loaders: Loaders;
  /** The active encoders and the models they read and write; absent when the server runs without encoders. */
  models?: ModelRegistry;
  /** The API key's holder; absent for a request without a key. */
  principal?: Principal;
  /** The HTTP server's metrics (retrieve stage timings); absent outside it. */
  metrics?: ServerMetrics;
  /** The corpus's retrieval settings, cached per process (absent: read per question). */
  settings?: CorpusSettingsSource;
  /** Read replicas: where this request's reads went (read-routing.ts); absent without replicas. */
  reads?: ReadsState;
}

/**
 * Shared by reference: Apollo runs each operation on a shallow copy of the context, so what the
 * routing plugin records must live in an object of its own for the server to see it.
 */
export interface ReadsState {
  /** This run must read from the primary (the retry after a replica failed). */
  primaryOnly: boolean;
  /** The replica this query reads from (then the context's `db` and `loaders` are its). */
  replica?: Replica;
  /** A read on the replica lost its connection: the server runs the query again on the primary. */
  replicaFailed?: boolean;
}

/**
 * One operation's context. On a pooled database its statements get a share of the pool
 * (DB_CONNECTIONS_PER_REQUEST, store/connection-share.ts), so one operation cannot hold every
 * connection; work still queued when REQUEST_TIMEOUT_MS has passed is not started.
 */
export function createContext(db: Database, config: Config, models?: ModelRegistry, principal?: Principal): Context {
  const deadline = config.requestTimeoutMs > 0 ? Date.now() + config.requestTimeoutMs : Infinity;
  const share = (connections: number) => (db.poolUsage ? shareOf(db, { connections, deadline, deadlineSetting: 'REQUEST_TIMEOUT_MS' }) : db);
  const shared = share(config.dbConnectionsPerRequest);
  const pool = db.poolUsage?.().max ?? config.dbPoolMax;
  const writes = share(Math.max(config.dbConnectionsPerRequest, pool - defaultSearchLimit(pool)));
  return { db: shared, writes, store: db, config, loaders: createLoaders(shared), models, principal };
}
