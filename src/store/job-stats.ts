import type { Queryable } from './db';
import { JOB_STATUSES, type JobStatus } from './jobs';

export interface OpenJobProgress {
  id: number;
  model: string;
  status: JobStatus;
  documentsDone: number;
  documentsTotal: number;
  passagesDone: number;
  passagesTotal: number;
}

/** Jobs per status, and the progress of every open (queued or running) job: what /metrics shows. */
export async function jobStats(db: Queryable): Promise<{ byStatus: Record<JobStatus, number>; open: OpenJobProgress[] }> {
  const counts = await db.query<{ status: JobStatus; n: number }>('SELECT status, count(*)::int AS n FROM embedding_jobs GROUP BY status');
  const byStatus = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const { status, n } of counts) byStatus[status] = n;
  const open = await db.query<OpenJobProgress>(
    `SELECT j.id, m.name AS model, j.status, j.documents_done AS "documentsDone", j.documents_total AS "documentsTotal",
            j.passages_done AS "passagesDone", j.passages_total AS "passagesTotal"
     FROM embedding_jobs j JOIN embedding_models m ON m.id = j.model_id
     WHERE j.status IN ('queued', 'running') ORDER BY j.id`,
  );
  return { byStatus, open };
}
