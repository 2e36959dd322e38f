import { EXTERNAL_RUNTIME } from '../encoders/external';
import type { Database, Queryable } from './db';

/**
 * What the pipeline has not finished (migration 0008): passages without their full-text vector
 * (and so without BM25 postings, which the triggers derive from it), and documents and passages
 * without a current vector of the active document / passage model (all of them while no model is
 * active). Counted over the recorded documents only, so it costs a scan of that small table and
 * their rows, not of the corpus; a record whose work is already done counts nothing.
 */
export async function pendingWork(db: Database): Promise<{ unindexedPassages: number; unembeddedPassages: number; unembeddedDocuments: number }> {
  const [row] = await db.query<{ unindexedPassages: number; unembeddedPassages: number; unembeddedDocuments: number }>(
    `WITH active AS (
       SELECT (SELECT model_id FROM active_encoders WHERE role = 'document') AS dm,
              (SELECT model_id FROM active_encoders WHERE role = 'passage') AS pm)
     SELECT
       (SELECT count(*) FROM pending_documents q JOIN passages p ON p.document_id = q.document_id
         WHERE p.search IS NULL)::int AS "unindexedPassages",
       (SELECT count(*) FROM pending_documents q JOIN passages p ON p.document_id = q.document_id, active
         WHERE NOT EXISTS (SELECT 1 FROM passage_embeddings e
                           WHERE e.model_id = active.pm AND e.document_id = p.document_id AND e.passage_id = p.id))::int AS "unembeddedPassages",
       (SELECT count(*) FROM pending_documents q JOIN documents d ON d.id = q.document_id, active
         WHERE NOT EXISTS (SELECT 1 FROM document_embeddings e
                           WHERE e.model_id = active.dm AND e.document_id = d.id AND e.content_hash = d.content_hash))::int AS "unembeddedDocuments"`,
  );
  return row;
}

/** Documents of ingest jobs not written yet: none of them is in pendingWork's counts, nor in any coverage. */
export interface QueuedIngest {
  /** Ingest jobs queued or running. */
  jobs: number;
  /** Their documents not yet written (a running job's written batches are rows, counted by pendingWork). */
  documents: number;
  /** Those documents' bytes, as JSON. */
  bytes: number;
}

/** What queued and running ingest jobs still hold; a scan of the open jobs' rows (ingest_jobs_status_idx). */
export async function queuedIngest(db: Queryable): Promise<QueuedIngest> {
  const [row] = await db.query<QueuedIngest>(
    `SELECT count(*)::int AS jobs, coalesce(sum(documents_total - documents_done), 0)::int AS documents,
            coalesce(sum(bytes_total - bytes_done), 0)::float8 AS bytes
     FROM ingest_jobs WHERE status IN ('queued', 'running')`,
  );
  return row;
}

/** A recorded document and the write it was recorded for. */
export interface PendingDocument {
  documentId: number;
  generation: string;
}

export interface PendingQuery {
  /** Only these documents (an ingest finishes its own batch); default: any. */
  documentIds?: readonly number[];
  /** Only records at least this old (a worker leaves fresh ones to the ingest that wrote them). */
  olderThanSeconds?: number;
  limit?: number;
  /**
   * Row-lock what is returned, skipping records another finisher holds (inside a transaction).
   * 'advisory': the same with a transaction-level advisory lock per document, taken on the server
   * the client talks to (Citus refuses FOR UPDATE over a distributed table's shards); writers of
   * the documents never wait for it (the background finisher's choice, pipeline/pending.ts).
   */
  lock?: boolean | 'advisory';
}

/** Advisory lock class of pending records (the second key is the document id). */
const PENDING_LOCK = 7240314;

/** Recorded documents, oldest id first. */
export async function pendingDocuments(db: Queryable, query: PendingQuery = {}): Promise<PendingDocument[]> {
  if (query.lock === 'advisory') {
    const candidates = await pendingDocuments(db, { ...query, lock: false, limit: query.limit === undefined ? undefined : 4 * query.limit });
    if (candidates.length === 0) return [];
    // No distributed table in this statement: it runs, and locks, on the coordinator.
    const locked = await db.query<{ id: number }>(
      'SELECT id FROM unnest($1::int[]) WITH ORDINALITY AS u(id, n) WHERE pg_try_advisory_xact_lock($2, id) LIMIT $3',
      [candidates.map((c) => c.documentId), PENDING_LOCK, query.limit ?? null],
    );
    const ids = new Set(locked.map((r) => r.id));
    return candidates.filter((c) => ids.has(c.documentId));
  }
  return db.query<PendingDocument>(
    `SELECT document_id AS "documentId", generation::text AS generation FROM pending_documents
     WHERE ($1::int[] IS NULL OR document_id = ANY($1::int[]))
       AND ($2::float8 IS NULL OR recorded_at <= now() - make_interval(secs => $2::float8))
     ORDER BY document_id LIMIT $3 ${query.lock ? 'FOR UPDATE SKIP LOCKED' : ''}`,
    [query.documentIds ?? null, query.olderThanSeconds ?? null, query.limit ?? null],
  );
}

/**
 * Clears the records of documents whose work the rows show done — every passage indexed, the
 * document and every passage with a current vector of the active models, every passage with its
 * sentence vectors (written by a statement of their own, after the passages'; none for an external
 * model, whose passage vectors the client brings) — and only for the
 * generation that was finished: a document re-written meanwhile keeps its record (the re-write
 * bumped the generation, or holds the row until it commits and then has). Returns how many.
 */
export async function clearFinished(db: Queryable, finished: readonly PendingDocument[]): Promise<number> {
  if (finished.length === 0) return 0;
  const [{ n }] = await db.query<{ n: number }>(
    `WITH active AS (
       SELECT (SELECT model_id FROM active_encoders WHERE role = 'document') AS dm,
              (SELECT model_id FROM active_encoders WHERE role = 'passage') AS pm,
              -- An external model's vectors come from the client, its sentences' never: none are waited for.
              coalesce((SELECT m.runtime = '${EXTERNAL_RUNTIME}' FROM active_encoders a JOIN embedding_models m ON m.id = a.model_id
                        WHERE a.role = 'passage'), false) AS pm_external),
     cleared AS (
       DELETE FROM pending_documents q
       USING unnest($1::int[], $2::bigint[]) AS f(document_id, generation), active
       WHERE q.document_id = f.document_id AND q.generation = f.generation
         AND NOT EXISTS (SELECT 1 FROM passages p WHERE p.document_id = q.document_id AND p.search IS NULL)
         AND EXISTS (SELECT 1 FROM document_embeddings e JOIN documents d ON d.id = e.document_id
                     WHERE e.model_id = active.dm AND e.document_id = q.document_id AND e.content_hash = d.content_hash)
         AND NOT EXISTS (SELECT 1 FROM passages p WHERE p.document_id = q.document_id AND NOT EXISTS (
                           SELECT 1 FROM passage_embeddings e
                           WHERE e.model_id = active.pm AND e.document_id = p.document_id AND e.passage_id = p.id))
         AND (active.pm_external OR NOT EXISTS (SELECT 1 FROM passages p WHERE p.document_id = q.document_id AND NOT EXISTS (
                           SELECT 1 FROM sentence_embeddings s
                           WHERE s.model_id = active.pm AND s.document_id = p.document_id AND s.passage_id = p.id)))
       RETURNING 1)
     SELECT count(*)::int AS n FROM cleared`,
    [finished.map((f) => f.documentId), finished.map((f) => f.generation)],
  );
  return n;
}
