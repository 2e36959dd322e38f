import { badUserInput, DomainError, ErrorCode, notFound } from '../errors';
import type { IngestJob } from '../generated/prisma/client';
import type { Database, Queryable } from './db';
import { JOB_STATUSES, type JobStatus } from './jobs';
import { columnsOf, selectList } from './rows';

/**
 * Durable ingest jobs (migration 0017): a large ingest through the API stores its documents here
 * and returns; job workers write them a batch at a time (pipeline/jobs/ingest-batch.ts), each
 * batch's rows, outcomes and progress in one transaction.
 */
export { JOB_STATUSES as INGEST_JOB_STATUSES };
export type IngestJobStatus = JobStatus;
export type IngestJobOutcomeStatus = 'created' | 'updated' | 'unchanged' | 'failed';
const OPEN = `('queued', 'running')`;
/** Advisory lock a batch holds to commit: ingest batches write one at a time, oldest job first, so a key given twice ends as given last. */
export const INGEST_JOB_LOCK = 7240314;

/**
 * An ingest job: Prisma's model but the model its vectors were given for (read by the job runner
 * alone), its status ours and its byte counts numbers (bigint columns, read as float8).
 */
export type IngestJobRow = Omit<IngestJob, 'status' | 'bytesTotal' | 'bytesDone' | 'vectorModel'> & {
  status: IngestJobStatus;
  bytesTotal: number;
  bytesDone: number;
};

export const INGEST_JOB_ROW = columnsOf<IngestJobRow>()({
  id: 'int',
  status: 'text',
  documentsTotal: 'int',
  documentsDone: 'int',
  bytesTotal: { type: 'bigint', readAs: 'float8' },
  bytesDone: { type: 'bigint', readAs: 'float8' },
  passagesDone: 'int',
  created: 'int',
  updated: 'int',
  unchanged: 'int',
  failed: 'int',
  error: 'text',
  createdAt: 'timestamptz',
  startedAt: 'timestamptz',
  finishedAt: 'timestamptz',
  updatedAt: 'timestamptz',
});

/** What `dhr jobs --ingest` prints, locally and through a server (whose API has no bytes). */
export type IngestJobListing = Omit<IngestJobRow, 'bytesTotal' | 'bytesDone'>;
export const ingestJobListing = ({ bytesTotal: _total, bytesDone: _done, ...rest }: IngestJobRow): IngestJobListing => rest;

const COLUMNS = selectList(INGEST_JOB_ROW, '');

const date = (d: Date | string | null) => (d === null ? null : new Date(d));
const asRow = (r: IngestJobRow): IngestJobRow => ({
  ...r,
  createdAt: new Date(r.createdAt),
  startedAt: date(r.startedAt),
  finishedAt: date(r.finishedAt),
  updatedAt: new Date(r.updatedAt),
});

/** A document to stage: its input as the caller sent it, or already failed (its strings cannot be stored as JSON). */
export type StagedDocument = { input: object } | { failed: { key: string | null; title: string | null; message: string } };

/**
 * Stores the documents (as the caller sent them, JSON) and queues the job, in one transaction;
 * documents already failed are recorded done. An empty list is refused: a job of nothing would be a
 * success that did nothing.
 */
export async function createIngestJob(db: Database, documents: readonly StagedDocument[], vectorModel?: string): Promise<IngestJobRow> {
  if (documents.length === 0) throw badUserInput('documents is empty: an ingest job needs at least one document', 'documents');
  const rows = documents.map((d, ordinal) =>
    'input' in d ? { ordinal, input: d.input } : { ordinal, input: null, key: d.failed.key, title: d.failed.title, message: d.failed.message },
  );
  const failed = rows.filter((r) => r.input === null).length;
  const id = await db.transaction(async (tx) => {
    const [job] = await tx.query<{ id: number }>(
      'INSERT INTO ingest_jobs (documents_total, bytes_total, documents_done, failed, vector_model) VALUES ($1, 0, $2, $2, $3) RETURNING id',
      [documents.length, failed, vectorModel ?? null],
    );
    await tx.query(
      `WITH staged AS (
         INSERT INTO ingest_job_documents (job_id, ordinal, input, bytes, status, key, title, message)
         SELECT $1, r.ordinal, r.input, coalesce(octet_length(r.input::text), 0),
                CASE WHEN r.input IS NULL THEN 'failed' END, r.key, r.title, r.message
         FROM jsonb_to_recordset($2::jsonb) AS r(ordinal int, input jsonb, key text, title text, message text)
         RETURNING bytes)
       UPDATE ingest_jobs SET bytes_total = (SELECT coalesce(sum(bytes), 0) FROM staged) WHERE id = $1`,
      [job.id, JSON.stringify(rows)],
    );
    return job.id;
  });
  return (await getIngestJob(db, id))!;
}

export async function getIngestJob(db: Queryable, id: number): Promise<IngestJobRow | undefined> {
  const [row] = await db.query<IngestJobRow>(`SELECT ${COLUMNS} FROM ingest_jobs WHERE id = $1`, [id]);
  return row && asRow(row);
}

export async function listIngestJobs(db: Queryable, status?: IngestJobStatus): Promise<IngestJobRow[]> {
  const rows = await db.query<IngestJobRow>(`SELECT ${COLUMNS} FROM ingest_jobs WHERE ($1::text IS NULL OR status = $1) ORDER BY id DESC`, [status ?? null]);
  return rows.map(asRow);
}

export interface IngestJobOutcomeRow {
  index: number;
  status: IngestJobOutcomeStatus;
  key: string | null;
  title: string | null;
  documentId: number | null;
  passages: number;
  message: string | null;
  warnings: string[];
}

/** The outcomes of the documents done so far, in the caller's order (optionally one status only). */
export function ingestJobOutcomes(db: Queryable, id: number, status?: IngestJobOutcomeStatus): Promise<IngestJobOutcomeRow[]> {
  return db.query<IngestJobOutcomeRow>(
    `SELECT ordinal AS index, status, key, title, document_id AS "documentId", passages, message, warnings FROM ingest_job_documents
     WHERE job_id = $1 AND status IS NOT NULL AND ($2::text IS NULL OR status = $2) ORDER BY ordinal`,
    [id, status ?? null],
  );
}

export async function cancelIngestJob(db: Queryable, id: number): Promise<IngestJobRow> {
  const updated = await db.query(
    `UPDATE ingest_jobs SET status = 'cancelled', finished_at = now(), updated_at = now() WHERE id = $1 AND status IN ${OPEN} RETURNING id`,
    [id],
  );
  if (updated.length > 0) await dropWaitingInputs(db, id);
  const job = await getIngestJob(db, id);
  if (!job) throw notFound(`no ingest job with id ${id}`, 'id');
  if (updated.length === 0) {
    throw new DomainError(ErrorCode.JOB_CONFLICT, `ingest job ${id} has already ${job.status}; only queued or running jobs can be cancelled`);
  }
  return job;
}

/** Whether any ingest job is queued or running (a worker's poll). */
export async function ingestJobsOpen(db: Queryable): Promise<boolean> {
  const [{ open }] = await db.query<{ open: boolean }>(`SELECT EXISTS (SELECT 1 FROM ingest_jobs WHERE status IN ${OPEN}) AS open`);
  return open;
}

export interface ClaimedIngestBatch {
  jobId: number;
  /** The external model the documents' own vectors are for (null: the active external models). */
  vectorModel: string | null;
  documents: { ordinal: number; input: unknown; bytes: number }[];
}

/**
 * Inside the batch's transaction: takes the store's ingest-batch lock (without waiting: another
 * worker's batch is in flight when it is held, and this one does other work), then the next
 * waiting documents of the oldest open job, in the caller's order, up to `maxDocuments` and
 * `maxBytes` (at least one). A job with nothing left waiting is marked succeeded here.
 * Returns the batch, `finished` (a job ended), or nothing to do.
 */
export async function claimIngestBatch(
  tx: Queryable,
  bounds: { maxDocuments: number; maxBytes: number },
): Promise<ClaimedIngestBatch | { finished: number } | undefined> {
  const [{ locked }] = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [INGEST_JOB_LOCK]);
  if (!locked) return undefined;
  const [job] = await tx.query<{ id: number; vectorModel: string | null }>(
    `SELECT id, vector_model AS "vectorModel" FROM ingest_jobs WHERE status IN ${OPEN} ORDER BY id LIMIT 1 FOR UPDATE`,
  );
  if (!job) return undefined;
  const documents = await tx.query<{ ordinal: number; input: unknown; bytes: number }>(
    `SELECT ordinal, input, bytes FROM (
       SELECT ordinal, input, bytes, sum(bytes) OVER (ORDER BY ordinal) - bytes AS before, row_number() OVER (ORDER BY ordinal) AS n
       FROM ingest_job_documents WHERE job_id = $1 AND status IS NULL ORDER BY ordinal LIMIT $2) w
     WHERE n = 1 OR before + bytes <= $3 ORDER BY ordinal`,
    [job.id, bounds.maxDocuments, bounds.maxBytes],
  );
  if (documents.length === 0) {
    await tx.query(
      `UPDATE ingest_jobs SET status = 'succeeded', finished_at = now(), updated_at = now(), started_at = least(started_at, now()) WHERE id = $1`,
      [job.id],
    );
    return { finished: job.id };
  }
  // The window keeps a prefix: once the bytes bound is passed no later row comes back (sums only grow).
  await tx.query(`UPDATE ingest_jobs SET status = 'running', started_at = least(started_at, now()), updated_at = now() WHERE id = $1`, [job.id]);
  return { jobId: job.id, vectorModel: job.vectorModel, documents: documents.map((d) => ({ ...d, bytes: Number(d.bytes) })) };
}

/** Inside the batch's transaction, after its writes: each document's outcome, and the job's progress. */
export async function completeIngestBatch(tx: Queryable, jobId: number, outcomes: readonly (IngestJobOutcomeRow & { bytes: number })[]): Promise<void> {
  await tx.query(
    `UPDATE ingest_job_documents d SET status = o.status, key = o.key, title = o.title, document_id = o."documentId",
       passages = o.passages, message = o.message, warnings = coalesce(o.warnings, '{}'), input = NULL
     FROM jsonb_to_recordset($2::jsonb) AS o(index int, status text, key text, title text, "documentId" int, passages int, message text, warnings text[])
     WHERE d.job_id = $1 AND d.ordinal = o.index`,
    [jobId, JSON.stringify(outcomes)],
  );
  const count = (s: IngestJobOutcomeStatus) => outcomes.filter((o) => o.status === s).length;
  await tx.query(
    `UPDATE ingest_jobs SET documents_done = documents_done + $2, bytes_done = bytes_done + $3, passages_done = passages_done + $4,
       created = created + $5, updated = updated + $6, unchanged = unchanged + $7, failed = failed + $8, updated_at = now()
     WHERE id = $1`,
    [
      jobId,
      outcomes.length,
      outcomes.reduce((n, o) => n + o.bytes, 0),
      outcomes.reduce((n, o) => n + (o.status === 'created' || o.status === 'updated' ? o.passages : 0), 0),
      count('created'),
      count('updated'),
      count('unchanged'),
      count('failed'),
    ],
  );
}

export async function failIngestJob(db: Queryable, id: number, message: string): Promise<void> {
  const updated = await db.query(
    `UPDATE ingest_jobs SET status = 'failed', error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND status IN ${OPEN} RETURNING id`,
    [id, message],
  );
  if (updated.length > 0) await dropWaitingInputs(db, id);
}

/**
 * A job that ended before its last document (cancelled, failed) keeps no copy of the documents it
 * never wrote: they can be megabytes, and nothing reads them again (done ones were cleared as written).
 */
async function dropWaitingInputs(db: Queryable, id: number): Promise<void> {
  await db.query('UPDATE ingest_job_documents SET input = NULL WHERE job_id = $1 AND status IS NULL AND input IS NOT NULL', [id]);
}
