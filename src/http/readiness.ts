import type { Database } from '../store/db';
import { loadMigrations } from '../store/migrate';
import { pendingWork } from '../store/pending';
import type { ReplicaReport, ReplicaSet } from '../store/replicas';
import { TIMED_OUT, withDeadline } from './deadline';

/**
 * How long /readyz waits for the database before calling it unavailable: a probe must answer
 * within the prober's own timeout (set that to 3 s or more), and a database that takes longer
 * than this for `SELECT version FROM schema_migrations` is not serving anyway.
 */
export const READY_DEADLINE_MS = 2000;
/** Counting pending work reads every passage; a probe every few seconds reuses the last count this long. */
const PENDING_REUSE_MS = 5000;

export type Pending = Awaited<ReturnType<typeof pendingWork>>;

export interface ReadyReport {
  status: 'ready' | 'not ready';
  database: 'ok' | 'unavailable';
  migrations: 'ok' | 'unknown' | { missing: string[] };
  models: 'loaded' | 'absent';
  /** Work still owed (indexing, embedding): reported, but the server serves meanwhile. */
  pending: Pending | 'unknown';
  /** Read replicas (DATABASE_READ_URL), as last checked: reported; reads fall back to the primary, so they never make the server unready. */
  replicas?: ReplicaReport[];
}

/**
 * The /readyz check: the database answers, every migration file of this version is applied.
 * Models absent (a server without encoders serves LEXICAL) and pending work do not make the
 * server unready; they are reported.
 */
export function readinessCheck(
  db: Database,
  options: { modelsLoaded: boolean; replicas?: ReplicaSet },
): () => Promise<{ ready: boolean; report: ReadyReport }> {
  const expected = loadMigrations().map((m) => m.version);
  let lastPending: { at: number; value: Pending } | undefined;
  return async () => {
    const report: ReadyReport = {
      status: 'not ready',
      database: 'unavailable',
      migrations: 'unknown',
      models: options.modelsLoaded ? 'loaded' : 'absent',
      pending: 'unknown',
      ...(options.replicas ? { replicas: options.replicas.report() } : {}),
    };
    const applied = await withDeadline(
      db.query<{ version: string }>('SELECT version FROM schema_migrations').then(
        (rows) => new Set(rows.map((r) => r.version)),
        (error: unknown) => (isUndefinedTable(error) ? new Set<string>() : undefined),
      ),
      READY_DEADLINE_MS,
    );
    if (applied === TIMED_OUT || applied === undefined) return { ready: false, report };
    report.database = 'ok';
    const missing = expected.filter((v) => !applied.has(v));
    report.migrations = missing.length === 0 ? 'ok' : { missing };
    if (missing.length === 0) {
      if (!lastPending || Date.now() - lastPending.at > PENDING_REUSE_MS) {
        const value = await withDeadline(pendingWork(db).catch(() => undefined), READY_DEADLINE_MS);
        if (value !== TIMED_OUT && value !== undefined) lastPending = { at: Date.now(), value };
      }
      if (lastPending) report.pending = lastPending.value;
    }
    const ready = missing.length === 0;
    report.status = ready ? 'ready' : 'not ready';
    return { ready, report };
  };
}

/** PostgreSQL's undefined_table: a database no migration has run on. */
function isUndefinedTable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '42P01';
}
