import type { Queryable } from './db';

/**
 * Finished jobs are kept for a while (their outcomes answer `ingestJob(id)`, `dhr jobs`, the
 * console) and then deleted, so a store that ingests every day does not keep every document's
 * outcome row forever: an ingest job of 100,000 documents leaves 100,000 `ingest_job_documents`
 * rows. Jobs still queued or running are never touched, however old. Their rows go with them
 * (ON DELETE CASCADE: documents of an ingest job, batches of an embedding job).
 */
export interface PrunedJobs {
  ingest: number;
  embedding: number;
  tune: number;
}

/**
 * Deletes jobs that finished more than `olderThanSeconds` ago; returns how many of each kind.
 * `finished_at` is set by every transition that ends a job (succeeded, failed, cancelled) and by
 * nothing else, so an open job, however old, has none.
 */
export async function pruneFinishedJobs(db: Queryable, olderThanSeconds: number): Promise<PrunedJobs> {
  const prune = async (table: string) =>
    (
      await db.query<{ n: number }>(
        `WITH gone AS (DELETE FROM ${table} WHERE finished_at < now() - make_interval(secs => $1) RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [olderThanSeconds],
      )
    )[0].n;
  return { ingest: await prune('ingest_jobs'), embedding: await prune('embedding_jobs'), tune: await prune('tune_runs') };
}
