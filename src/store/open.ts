import pino from 'pino';
import type { Database, Distribution } from './db';
import { explainConnectFailure } from './connect-problem';
import type { ConnectionLostFields } from './faults';
import { migrate, MigrationError } from './migrate';
import { refreshBm25Index } from './bm25-index';
import { buildDeferredIndexes } from './deferred-indexes';
import { PgliteDatabase } from './pglite';
import { PostgresDatabase, redactUrl } from './postgres';
import { ReplicaSet } from './replicas';

export interface StoreLocation {
  /** A PostgreSQL server URL; absent: embedded PGlite persisted in dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** PostgreSQL only: statement_timeout and connect timeout for every pooled connection. */
  statementTimeoutMs?: number;
  dbConnectTimeoutMs?: number;
  /** PostgreSQL only: connections in the pool (DB_POOL_MAX). */
  dbPoolMax?: number;
  /** PostgreSQL only: search statements kept prepared per connection (DB_PREPARED_STATEMENTS). */
  dbPreparedStatements?: number;
  /** DHR_DISTRIBUTED: 'citus' when databaseUrl is a Citus coordinator (docs/scale-out.md). */
  distributed?: Distribution;
  /** PGLITE_BM25_INDEX: a new PGlite store gets the BM25 index (store/pglite.ts). */
  pgliteBm25Index?: boolean;
  /** LOG_LEVEL of the pool's own log lines (a dropped connection); default info. */
  logLevel?: string;
}

/**
 * The pool's log: JSON lines on stderr like the server's (observability/logger.ts, a layer above
 * the store), since the pool opens before any server and its logger exist.
 */
function poolLog(level = 'info'): pino.Logger {
  return pino({ level, base: { service: 'dhr-graphql' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ fd: 2, sync: true }));
}

export async function openDatabase(config: StoreLocation): Promise<Database> {
  if (config.databaseUrl) {
    const database = redactUrl(config.databaseUrl);
    let log: pino.Logger | undefined;
    const db = new PostgresDatabase({
      url: config.databaseUrl,
      statementTimeoutMs: config.statementTimeoutMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      maxConnections: config.dbPoolMax,
      preparedStatements: config.dbPreparedStatements,
      log: (message: string, fields?: ConnectionLostFields) => (log ??= poolLog(config.logLevel)).warn({ ...fields, database }, message),
    });
    db.distributed = config.distributed;
    return db;
  }
  if (config.distributed) {
    throw new MigrationError(`DHR_DISTRIBUTED=${config.distributed} needs DATABASE_URL: the URL of the Citus coordinator`);
  }
  return PgliteDatabase.open({ dataDir: config.dataDir, bm25Index: config.pgliteBm25Index });
}

export async function openMigratedDatabase(config: StoreLocation): Promise<Database> {
  const db = await openDatabase(config);
  try {
    await migrate(db, undefined, { distributed: config.distributed });
    // What a bulk ingest that died half way left unbuilt (store/deferred-indexes.ts).
    await buildDeferredIndexes(db);
    // The BM25 index's statistics, as a restart leaves them (store/bm25-index.ts).
    await refreshBm25Index(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    // The first statement is the first connection: a wrong host, port, password or database name reads as one line.
    throw (config.databaseUrl && explainConnectFailure(error, config.databaseUrl)) || error;
  }
  return db;
}

export interface ReplicaLocation {
  readUrls: string[];
  replicaMaxLagMs: number;
  replicaCheckMs: number;
  statementTimeoutMs?: number;
  dbConnectTimeoutMs?: number;
  /** Connections per replica pool: the primary's DB_POOL_MAX (the same machine-sized default). */
  dbPoolMax?: number;
  dbPreparedStatements?: number;
}

/** The read replicas of a PostgreSQL primary (DATABASE_READ_URL); undefined when none are configured. */
export async function openReplicas(primary: Database, config: ReplicaLocation): Promise<ReplicaSet | undefined> {
  if (config.readUrls.length === 0) return undefined;
  return ReplicaSet.open(primary, config.readUrls, {
    maxLagMs: config.replicaMaxLagMs,
    checkMs: config.replicaCheckMs,
    statementTimeoutMs: config.statementTimeoutMs ?? 0,
    connectTimeoutMs: config.dbConnectTimeoutMs ?? 5000,
    maxConnections: config.dbPoolMax,
    preparedStatements: config.dbPreparedStatements,
  });
}
