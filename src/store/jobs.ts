import { isExternal } from '../encoders/external';
import { badUserInput, DomainError, ErrorCode, notFound } from '../errors';
import type { EmbeddingJob } from '../generated/prisma/client';
import type { Database, Queryable } from './db';
import { columnsOf, fieldsOf, selectList } from './rows';
import { DOCUMENT_TO_EMBED, MODEL_COLUMNS, PASSAGE_TO_EMBED, type EmbeddingModelRow, type PendingDocument, type PendingPassage } from './embeddings';

export const JOB_SCOPES = ['ALL', 'STALE', 'DOCUMENTS'] as const;
export type JobScope = (typeof JOB_SCOPES)[number];
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type JobLevel = 'documents' | 'passages';
const OPEN = `('queued', 'running')`;

/** A re-embedding job: Prisma's model with its model's name (a join), its scope and status ours. */
export type JobRow = Omit<EmbeddingJob, 'scope' | 'status'> & { model: string; scope: JobScope; status: JobStatus };

/** The job's own columns, in the order `dhr jobs list` prints them (the model's name after modelId). */
export const JOB_ROW = columnsOf<Omit<JobRow, 'model'>>()({
  id: 'int',
  modelId: 'int',
  scope: 'text',
  documentIds: 'int[]',
  status: 'text',
  documentsTotal: 'int',
  documentsDone: 'int',
  passagesTotal: 'int',
  passagesDone: 'int',
  error: 'text',
  createdAt: 'timestamptz',
  startedAt: 'timestamptz',
  finishedAt: 'timestamptz',
  updatedAt: 'timestamptz',
});

const JOB_SELECT = `SELECT ${selectList(JOB_ROW, 'j', ['id', 'modelId'])}, m.name AS model, ${selectList(
  JOB_ROW,
  'j',
  fieldsOf(JOB_ROW).filter((f) => f !== 'id' && f !== 'modelId'),
)}
  FROM embedding_jobs j JOIN embedding_models m ON m.id = j.model_id`;

/*
 * What a job embeds, per level and scope. `k` is a one-row CTE holding the job's model ($1) and
 * listed documents ($2), so every statement binds both parameters whatever the scope.
 * STALE = no vector for the model, or (documents) one computed from other content.
 */
const PARAMS = 'k AS (SELECT $1::int AS model_id, $2::int[] AS ids)';
const STALE: Record<JobLevel, string> = {
  documents: `NOT EXISTS (SELECT 1 FROM document_embeddings e
                WHERE e.model_id = k.model_id AND e.document_id = d.id AND e.content_hash = d.content_hash)`,
  // document_id too: on Citus the subquery must join on the distribution column. Sentence vectors
  // (migration 0018) count: a store embedded before them gets them from a STALE job.
  passages: `NOT (EXISTS (SELECT 1 FROM passage_embeddings e
                    WHERE e.model_id = k.model_id AND e.document_id = p.document_id AND e.passage_id = p.id)
              AND EXISTS (SELECT 1 FROM sentence_embeddings s
                    WHERE s.model_id = k.model_id AND s.document_id = p.document_id AND s.passage_id = p.id))`,
};
const LISTED: Record<JobLevel, string> = { documents: 'd.id = ANY(k.ids)', passages: 'p.document_id = ANY(k.ids)' };
const FROM: Record<JobLevel, string> = { documents: 'documents d', passages: 'passages p' };
const ID: Record<JobLevel, string> = { documents: 'd.id', passages: 'p.id' };

function scopeCondition(level: JobLevel, scope: JobScope): string {
  if (scope === 'ALL') return 'TRUE';
  if (scope === 'STALE') return STALE[level];
  return LISTED[level];
}

/** After the planned ranges: whatever is still missing within the job's scope (new or changed since). */
function catchUpCondition(level: JobLevel, scope: JobScope): string {
  return scope === 'DOCUMENTS' ? `${STALE[level]} AND ${LISTED[level]}` : STALE[level];
}

/** Splits the matching ids into batches of consecutive ids; returns how many items were planned. */
async function planBatches(tx: Queryable, job: number, model: number, ids: number[], level: JobLevel, condition: string, batchSize: number): Promise<number> {
  const [{ n }] = await tx.query<{ n: number }>(
    `WITH ${PARAMS},
     numbered AS (SELECT ${ID[level]} AS id, (row_number() OVER (ORDER BY ${ID[level]}) - 1) / $3 AS b
                  FROM ${FROM[level]}, k WHERE ${condition}),
     planned AS (INSERT INTO embedding_job_batches (job_id, level, first_id, last_id, items)
                 SELECT $4, '${level}', min(id), max(id), count(*) FROM numbered GROUP BY b RETURNING items)
     SELECT coalesce(sum(items), 0)::int AS n FROM planned`,
    [model, ids, batchSize, job],
  );
  return n;
}

export interface CreateJobInput {
  model: string;
  scope: JobScope;
  documentIds?: number[];
  batchSize: number;
}

/** Creates a job and plans its batches (documents, then passages) in one transaction. */
export async function createJob(db: Database, input: CreateJobInput): Promise<JobRow> {
  const ids = input.documentIds ?? [];
  if (input.scope === 'DOCUMENTS' && ids.length === 0) {
    throw badUserInput('scope DOCUMENTS needs documentIds', 'documentIds');
  }
  if (input.scope !== 'DOCUMENTS' && input.documentIds !== undefined) {
    throw badUserInput(`documentIds only go with scope DOCUMENTS, not ${input.scope}`, 'documentIds');
  }
  const id = await db.transaction(async (tx) => {
    // Row lock on the model: concurrent reembeds of one model queue here, then see each other's job.
    const [model] = await tx.query<EmbeddingModelRow>(`SELECT ${MODEL_COLUMNS} FROM embedding_models WHERE name = $1 FOR UPDATE`, [input.model]);
    if (!model) throw notFound(`no embedding model named "${input.model}" is registered`, 'model');
    if (isExternal(model)) {
      throw badUserInput(`model "${input.model}" is external: the server cannot encode with it; its vectors come with ingestDocuments`, 'model');
    }
    if (ids.length > 0) {
      const known = await tx.query<{ id: number }>('SELECT id FROM documents WHERE id = ANY($1::int[])', [ids]);
      const found = new Set(known.map((k) => k.id));
      const missing = ids.filter((i) => !found.has(i));
      if (missing.length > 0) throw notFound(`no documents with ids ${missing.join(', ')}`, 'documentIds');
    }
    const [open] = await tx.query<{ id: number; status: string }>(`SELECT id, status FROM embedding_jobs WHERE model_id = $1 AND status IN ${OPEN}`, [
      model.id,
    ]);
    if (open) {
      throw new DomainError(ErrorCode.JOB_CONFLICT, `model "${input.model}" already has job ${open.id} (${open.status}); cancel it or wait for it`);
    }
    const [job] = await tx.query<{ id: number }>('INSERT INTO embedding_jobs (model_id, scope, document_ids) VALUES ($1, $2, $3::int[]) RETURNING id', [
      model.id,
      input.scope,
      ids,
    ]);
    const documents = await planBatches(tx, job.id, model.id, ids, 'documents', scopeCondition('documents', input.scope), input.batchSize);
    const passages = await planBatches(tx, job.id, model.id, ids, 'passages', scopeCondition('passages', input.scope), input.batchSize);
    await tx.query('UPDATE embedding_jobs SET documents_total = $2, passages_total = $3 WHERE id = $1', [job.id, documents, passages]);
    return job.id;
  });
  return (await getJob(db, id))!;
}

export async function getJob(db: Queryable, id: number): Promise<JobRow | undefined> {
  const [row] = await db.query<JobRow>(`${JOB_SELECT} WHERE j.id = $1`, [id]);
  return row;
}

export function listJobs(db: Queryable, status?: JobStatus): Promise<JobRow[]> {
  return db.query<JobRow>(`${JOB_SELECT} WHERE ($1::text IS NULL OR j.status = $1) ORDER BY j.id DESC`, [status ?? null]);
}

/** The open job of a model, if any (the CLI attaches to it). */
export async function openJobForModel(db: Queryable, model: string): Promise<JobRow | undefined> {
  const [row] = await db.query<JobRow>(`${JOB_SELECT} WHERE m.name = $1 AND j.status IN ${OPEN}`, [model]);
  return row;
}

export async function cancelJob(db: Queryable, id: number): Promise<JobRow> {
  const updated = await db.query<{ id: number }>(
    `UPDATE embedding_jobs SET status = 'cancelled', finished_at = now(), updated_at = now()
     WHERE id = $1 AND status IN ${OPEN} RETURNING id`,
    [id],
  );
  const job = await getJob(db, id);
  if (!job) throw notFound(`no job with id ${id}`, 'id');
  if (updated.length === 0) throw new DomainError(ErrorCode.JOB_CONFLICT, `job ${id} has already ${job.status}; only queued or running jobs can be cancelled`);
  return job;
}

/** Marks queued jobs running: a worker is about to claim their batches. */
export async function startQueuedJobs(db: Queryable): Promise<void> {
  await db.query(
    // least(), not coalesce(): the same (NULL is skipped), and Citus refuses now() inside coalesce
    // in a write to a reference table.
    `UPDATE embedding_jobs SET status = 'running', started_at = least(started_at, now()), updated_at = now()
     WHERE status = 'queued'`,
  );
}

export interface ClaimedBatch {
  id: number;
  jobId: number;
  level: JobLevel;
  firstId: number;
  lastId: number;
  scope: JobScope;
  documentIds: number[];
  model: EmbeddingModelRow;
}

/**
 * Claims the next open batch of an open job and keeps it locked for the rest of the transaction;
 * batches other workers hold are skipped, so several workers never do the same batch at once.
 */
export async function claimBatch(tx: Queryable): Promise<ClaimedBatch | undefined> {
  const [row] = await tx.query<Omit<ClaimedBatch, 'model'> & { modelId: number }>(
    `SELECT b.id, b.job_id AS "jobId", b.level, b.first_id AS "firstId", b.last_id AS "lastId",
            j.scope, j.document_ids AS "documentIds", j.model_id AS "modelId"
     FROM embedding_job_batches b JOIN embedding_jobs j ON j.id = b.job_id
     WHERE b.done_at IS NULL AND j.status IN ${OPEN}
     ORDER BY b.job_id, b.level, b.first_id
     LIMIT 1
     FOR UPDATE OF b SKIP LOCKED`,
  );
  if (!row) return undefined;
  const { modelId, ...batch } = row;
  const [model] = await tx.query<EmbeddingModelRow>(`SELECT ${MODEL_COLUMNS} FROM embedding_models WHERE id = $1`, [modelId]);
  return { ...batch, model };
}

export type BatchDocument = PendingDocument;
export type BatchPassage = PendingPassage;

/** The batch's items as they are now: deleted ones are gone, changed documents carry their new hash. */
export function batchDocuments(tx: Queryable, batch: ClaimedBatch): Promise<BatchDocument[]> {
  return tx.query<BatchDocument>(
    `WITH ${PARAMS} SELECT ${DOCUMENT_TO_EMBED} FROM documents d, k
     WHERE d.id BETWEEN $3 AND $4 AND ${scopeCondition('documents', batch.scope)} ORDER BY d.id`,
    [batch.model.id, batch.documentIds, batch.firstId, batch.lastId],
  );
}

export function batchPassages(tx: Queryable, batch: ClaimedBatch): Promise<BatchPassage[]> {
  return tx.query<BatchPassage>(
    `WITH ${PARAMS} SELECT ${PASSAGE_TO_EMBED} FROM passages p, k
     WHERE p.id BETWEEN $3 AND $4 AND ${scopeCondition('passages', batch.scope)} ORDER BY p.id`,
    [batch.model.id, batch.documentIds, batch.firstId, batch.lastId],
  );
}

/**
 * Marks the batch done and adds its count to the job's progress; false when the job was cancelled
 * (or dropped) meanwhile, so the caller rolls the batch back.
 */
export async function completeBatch(tx: Queryable, batch: ClaimedBatch, written: number): Promise<boolean> {
  const column = batch.level === 'documents' ? 'documents_done' : 'passages_done';
  const updated = await tx.query(`UPDATE embedding_jobs SET ${column} = ${column} + $2, updated_at = now() WHERE id = $1 AND status IN ${OPEN} RETURNING id`, [
    batch.jobId,
    written,
  ]);
  if (updated.length === 0) return false;
  await tx.query('UPDATE embedding_job_batches SET done_at = now() WHERE id = $1', [batch.id]);
  return true;
}

/**
 * For each running job with no open batch left (none in flight either): plans what went missing
 * meanwhile (documents ingested or changed during the job), or marks it succeeded. Returns the
 * jobs that finished and those that got more work.
 */
export async function finishJobs(db: Database, batchSize: number): Promise<{ finished: number[]; replanned: number[] }> {
  const candidates = await db.query<{ id: number }>(
    `SELECT j.id FROM embedding_jobs j WHERE j.status = 'running'
       AND NOT EXISTS (SELECT 1 FROM embedding_job_batches b WHERE b.job_id = j.id AND b.done_at IS NULL)`,
  );
  const finished: number[] = [];
  const replanned: number[] = [];
  for (const { id } of candidates) {
    const outcome = await db.transaction(async (tx): Promise<'finished' | 'replanned' | undefined> => {
      // The job row lock serializes finishers; the checks are repeated under it.
      const [job] = await tx.query<{ modelId: number; scope: JobScope; documentIds: number[] }>(
        `SELECT model_id AS "modelId", scope, document_ids AS "documentIds" FROM embedding_jobs
         WHERE id = $1 AND status = 'running' FOR UPDATE`,
        [id],
      );
      if (!job) return undefined;
      const [open] = await tx.query('SELECT 1 FROM embedding_job_batches WHERE job_id = $1 AND done_at IS NULL LIMIT 1', [id]);
      if (open) return undefined;
      const documents = await planBatches(tx, id, job.modelId, job.documentIds, 'documents', catchUpCondition('documents', job.scope), batchSize);
      const passages = await planBatches(tx, id, job.modelId, job.documentIds, 'passages', catchUpCondition('passages', job.scope), batchSize);
      if (documents + passages > 0) {
        await tx.query(
          'UPDATE embedding_jobs SET documents_total = documents_total + $2, passages_total = passages_total + $3, updated_at = now() WHERE id = $1',
          [id, documents, passages],
        );
        return 'replanned';
      }
      // Items deleted during the job were planned but never written: the totals end at what exists.
      await tx.query(
        `UPDATE embedding_jobs SET status = 'succeeded', finished_at = now(), updated_at = now(),
           documents_total = documents_done, passages_total = passages_done WHERE id = $1`,
        [id],
      );
      return 'finished';
    });
    if (outcome === 'finished') finished.push(id);
    if (outcome === 'replanned') replanned.push(id);
  }
  return { finished, replanned };
}

export async function failJob(db: Queryable, id: number, message: string): Promise<void> {
  await db.query(`UPDATE embedding_jobs SET status = 'failed', error = $2, finished_at = now(), updated_at = now() WHERE id = $1 AND status IN ${OPEN}`, [
    id,
    message,
  ]);
}
