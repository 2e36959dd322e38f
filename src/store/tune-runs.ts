import type { TuneRun } from '../generated/prisma/client';
import type { Queryable } from './db';
import { columnsOf, selectList } from './rows';

export const TUNE_RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type TuneRunStatus = (typeof TUNE_RUN_STATUSES)[number];

/** A tune run (migrations/0016_tune_runs.sql): Prisma's model, its status one of ours and its JSON objects typed as objects. */
export type TuneRunRow = Omit<TuneRun, 'status' | 'options' | 'report'> & {
  status: TuneRunStatus;
  options: Record<string, unknown>;
  report: Record<string, unknown> | null;
};

export const TUNE_RUN_ROW = columnsOf<TuneRunRow>()({
  id: 'int',
  mode: 'text',
  options: 'jsonb',
  apply: 'bool',
  status: 'text',
  pointsDone: 'int',
  pointsTotal: 'int',
  report: 'jsonb',
  settingsVersion: 'int',
  error: 'text',
  startedAt: 'timestamptz',
  finishedAt: 'timestamptz',
  updatedAt: 'timestamptz',
});

const COLUMNS = selectList(TUNE_RUN_ROW, '');

const asRow = (r: TuneRunRow): TuneRunRow => ({
  ...r,
  startedAt: new Date(r.startedAt),
  finishedAt: r.finishedAt && new Date(r.finishedAt),
  updatedAt: new Date(r.updatedAt),
});

export async function createTuneRun(db: Queryable, run: { mode: string; options: Record<string, unknown>; apply: boolean }): Promise<TuneRunRow> {
  const [row] = await db.query<TuneRunRow>(`INSERT INTO tune_runs (mode, options, apply) VALUES ($1, $2::jsonb, $3) RETURNING ${COLUMNS}`, [
    run.mode,
    JSON.stringify(run.options),
    run.apply,
  ]);
  return asRow(row);
}

export async function tuneRun(db: Queryable, id: number): Promise<TuneRunRow | undefined> {
  const [row] = await db.query<TuneRunRow>(`SELECT ${COLUMNS} FROM tune_runs WHERE id = $1`, [id]);
  return row && asRow(row);
}

/** Whether a tune of this store is running (after failStaleTuneRuns, a live one). */
export async function tuneRunning(db: Queryable): Promise<boolean> {
  const [{ running }] = await db.query<{ running: boolean }>(`SELECT EXISTS (SELECT 1 FROM tune_runs WHERE status = 'running') AS running`);
  return running;
}

export async function tuneRunProgress(db: Queryable, id: number, done: number, total: number): Promise<void> {
  await db.query(`UPDATE tune_runs SET points_done = $2, points_total = $3, updated_at = now() WHERE id = $1 AND status = 'running'`, [id, done, total]);
}

/**
 * The run's end, with its final count of points: the progress writes are not awaited (a tune does
 * not wait on its own bookkeeping), so the last of them may still be in flight on another
 * connection, and then the count it would write is lost (its WHERE sees 'succeeded').
 */
export async function finishTuneRun(
  db: Queryable,
  id: number,
  result: { report: Record<string, unknown>; settingsVersion: number | null; pointsRun: number },
): Promise<void> {
  await db.query(
    `UPDATE tune_runs SET status = 'succeeded', report = $2::jsonb, settings_version = $3, points_done = $4, points_total = $4,
            finished_at = now(), updated_at = now() WHERE id = $1`,
    [id, JSON.stringify(result.report), result.settingsVersion, result.pointsRun],
  );
}

export async function failTuneRun(db: Queryable, id: number, error: string): Promise<void> {
  await db.query(`UPDATE tune_runs SET status = 'failed', error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND status = 'running'`, [
    id,
    error,
  ]);
}

/**
 * Runs left 'running' by a server that stopped: no progress for `staleMinutes` (a running tune
 * writes its progress after every grid point, seconds to a minute apart). Marked failed when runs
 * are read, so several servers over one store never fail each other's live runs.
 */
export async function failStaleTuneRuns(db: Queryable, staleMinutes = 10): Promise<void> {
  await db.query(
    `UPDATE tune_runs SET status = 'failed', error = 'interrupted: the server running it stopped', finished_at = now(), updated_at = now()
      WHERE status = 'running' AND updated_at < now() - make_interval(mins => $1)`,
    [staleMinutes],
  );
}
