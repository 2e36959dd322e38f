import { currentLogger } from '../observability/request-scope';
import type { Database } from '../store/db';
import type { StorageReason } from '../store/faults';
import { activeAssignment } from '../store/active';
import { bm25Candidates, type Bm25Candidates } from '../store/bm25-index';
import { coverage, type LevelCounts } from '../store/coverage';
import { loadMigrations } from '../store/migrate';
import { pendingWork, queuedIngest, type QueuedIngest } from '../store/pending';
import type { ReplicaReport, ReplicaSet } from '../store/replicas';
import { checkDataFolder, storageHealth } from '../store/storage-health';
import { TIMED_OUT, withDeadline } from './deadline';

/**
 * How long /readyz waits for the database before calling it unavailable: a probe must answer
 * within the prober's own timeout (set that to 3 s or more), and a database that takes longer
 * than this for `SELECT version FROM schema_migrations` is not serving anyway.
 */
export const READY_DEADLINE_MS = 2000;
/** Counting pending work and coverage reads every passage; a probe every few seconds reuses the last counts this long. */
const PENDING_REUSE_MS = 5000;

export type Pending = Awaited<ReturnType<typeof pendingWork>>;

/**
 * Documents and passages, and how many have a vector of the active document / passage model; and
 * what ingest jobs hold but have not written yet, which neither total includes.
 */
export type Coverage = { documents: Omit<LevelCounts, 'indexed'>; passages: Omit<LevelCounts, 'indexed'>; queued: QueuedIngest };

export interface ReadyReport {
  /** degraded: ready, but the store refuses writes (storage); reads are served, writes get STORAGE_UNAVAILABLE. */
  status: 'ready' | 'degraded' | 'not ready';
  database: 'ok' | 'unavailable';
  /**
   * Whether the store takes writes: PGlite's data folder checked with a write of its own; on
   * PostgreSQL the fault the last write met, until a write succeeds. 'unknown': the check failed otherwise.
   */
  storage: 'ok' | StorageReason | 'unknown';
  /** PostgreSQL: the pool's connections (busy ones are checked out); a full pool is reported, not unready. */
  pool?: { busy: number; idle: number; waiting: number; max: number };
  migrations: 'ok' | 'unknown' | { missing: string[] };
  /** How passage BM25 finds its candidates (store/bm25-index.ts), once the migrations are applied. */
  bm25?: Bm25Candidates;
  models: 'loaded' | 'absent';
  /** Work still owed (indexing, embedding): reported, but the server serves meanwhile. */
  pending: Pending | 'unknown';
  /** How much of the corpus the active models cover (embedding at first start: ready meanwhile, and this says how far it is). */
  coverage: Coverage | 'unknown';
  /** Read replicas (DATABASE_READ_URL), as last checked: reported; reads fall back to the primary, so they never make the server unready. */
  replicas?: ReplicaReport[];
}

/**
 * The /readyz check: the database answers, every migration file of this version is applied.
 * Models absent (a server without encoders serves LEXICAL) and pending work do not make the
 * server unready; they are reported. A store that refuses writes (read-only, full) makes it
 * 'degraded' but still ready: reads are served and writes answer STORAGE_UNAVAILABLE, which
 * every server on the same store would do alike. The checks run on the database's probe
 * connection where it has one, so a pool whose every connection is busy (a heavy request) does
 * not read as a database that does not answer.
 */
export function readinessCheck(
  db: Database,
  options: { modelsLoaded: boolean; replicas?: ReplicaSet },
): () => Promise<{ ready: boolean; report: ReadyReport }> {
  const expected = loadMigrations().map((m) => m.version);
  let lastCounts: { at: number; pending: Pending; coverage: Coverage } | undefined;
  // pendingWork takes a Database: this one's reads go to the probe connection.
  const probing: Database = db.probe ? Object.assign(Object.create(db) as Database, { query: db.probe.bind(db) }) : db;
  return async () => {
    const usage = db.poolUsage?.();
    const report: ReadyReport = {
      status: 'not ready',
      database: 'unavailable',
      storage: 'unknown',
      ...(usage ? { pool: { busy: usage.total - usage.idle, idle: usage.idle, waiting: usage.waiting, max: usage.max } } : {}),
      migrations: 'unknown',
      models: options.modelsLoaded ? 'loaded' : 'absent',
      pending: 'unknown',
      coverage: 'unknown',
      ...(options.replicas ? { replicas: options.replicas.report() } : {}),
    };
    const [applied, storage] = await Promise.all([
      withDeadline(
        probing.query<{ version: string }>('SELECT version FROM schema_migrations').then(
          (rows) => new Set(rows.map((r) => r.version)),
          (error: unknown) => (isUndefinedTable(error) ? new Set<string>() : undefined),
        ),
        READY_DEADLINE_MS,
      ),
      storageState(db),
    ]);
    report.storage = storage;
    if (applied === TIMED_OUT || applied === undefined) return { ready: false, report };
    report.database = 'ok';
    const missing = expected.filter((v) => !applied.has(v));
    report.migrations = missing.length === 0 ? 'ok' : { missing };
    if (missing.length === 0) {
      const bm25 = await withDeadline(
        bm25Candidates(db).catch(() => undefined),
        READY_DEADLINE_MS,
      );
      if (bm25 !== TIMED_OUT && bm25 !== undefined) report.bm25 = bm25;
      if (!lastCounts || Date.now() - lastCounts.at > PENDING_REUSE_MS) {
        const value = await withDeadline(
          counts(probing).catch(() => undefined),
          READY_DEADLINE_MS,
        );
        if (value !== TIMED_OUT && value !== undefined) lastCounts = { at: Date.now(), ...value };
      }
      if (lastCounts) {
        report.pending = lastCounts.pending;
        report.coverage = lastCounts.coverage;
      }
    }
    const ready = missing.length === 0;
    report.status = !ready ? 'not ready' : report.storage === 'read-only' || report.storage === 'full' ? 'degraded' : 'ready';
    return { ready, report };
  };
}

/** Pending work, coverage of the active models (none active: nothing embedded) and what ingest jobs hold. */
async function counts(db: Database): Promise<{ pending: Pending; coverage: Coverage }> {
  const pending = await pendingWork(db);
  const active = await activeAssignment(db);
  const { documents, passages } = await coverage(db, { document: active.document?.id, passage: active.passage?.id });
  const queued = await queuedIngest(db);
  return {
    pending,
    coverage: { documents: { total: documents.total, embedded: documents.embedded }, passages: { total: passages.total, embedded: passages.embedded }, queued },
  };
}

/**
 * Whether the store takes writes. PGlite's folder is checked (a fault found is recorded, and
 * logged the first time; a passing check ends one); PostgreSQL's files are the server's, so the
 * fault its last write met stands until a write succeeds.
 */
async function storageState(db: Database): Promise<ReadyReport['storage']> {
  const health = storageHealth(db);
  if (db.kind === 'pglite' && db.location !== 'memory://') {
    const fault = await checkDataFolder(db.location).catch(() => 'unknown' as const);
    if (fault === 'unknown') return 'unknown';
    if (fault) health.record(fault, currentLogger());
    else health.clear(currentLogger());
  }
  return health.current?.reason ?? 'ok';
}

/** PostgreSQL's undefined_table: a database no migration has run on. */
function isUndefinedTable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '42P01';
}
