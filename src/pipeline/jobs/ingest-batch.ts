import { messageOf } from '../../errors';
import { prepareDocument } from '../../ingest/prepare';
import type { DocumentInput, IngestOptions, PreparedDocument } from '../../ingest/types';
import { isExternal } from '../../encoders/external';
import { writeBatchIn } from '../../store/bulk-write';
import { writeSuppliedVectors, type SuppliedVectorModels } from '../../store/embeddings';
import type { Database, Queryable } from '../../store/db';
import { isDatabaseUnavailable, isStorageFault } from '../../store/faults';
import { claimIngestBatch, completeIngestBatch, ingestJobsOpen, type IngestJobOutcomeRow } from '../../store/ingest-jobs';
import { writeDocumentIn, type WriteResult } from '../../store/write';
import type { EmbeddingTargets } from '../embed';
import { finishPending } from '../pending';
import { suppliedVectorModels } from '../supplied-vectors';
import { passageTokenBudget } from '../token-budget';

/** Documents and bytes (of their JSON) per ingest-job batch: one transaction each, a few seconds of work at most. */
export const INGEST_BATCH_DOCUMENTS = 16;
export const INGEST_BATCH_BYTES = 256 << 10;

export interface IngestBatchOptions {
  ingest: IngestOptions;
  /** The models to split for and embed with (asked before each batch); undefined: words only, no embedding. */
  targets?: () => Promise<EmbeddingTargets | undefined>;
  /** Embed the written documents after the batch commits (EMBED_ON_INGEST). */
  embed: boolean;
  embedBatchSize?: number;
  maxDocuments?: number;
  maxBytes?: number;
  /** A job's batch was claimed (the worker names the job if the batch then fails). */
  onClaimed?: (jobId: number) => void;
  /** Inside the batch's transaction, its rows and progress written, before commit (crash tests). */
  beforeCommit?: (jobId: number) => void;
}

export type IngestBatchResult = { worked: false } | { worked: true; jobId: number; finished: boolean; documents: number };

type Outcome = IngestJobOutcomeRow & { bytes: number };

/**
 * One batch of the oldest open ingest job: its next documents are prepared and written, and their
 * outcomes and the job's progress recorded, in one transaction (the bulk path's set-based write; a
 * batch that fails is written again one document at a time under savepoints, so a bad document
 * fails alone with its message). A crash rolls all of it back: the documents are taken again by
 * the next batch, none half-written, none twice. Then, after the commit, the written documents are
 * indexed and embedded as a synchronous ingest does (pending records cover a crash meanwhile).
 */
export async function runIngestBatch(db: Database, options: IngestBatchOptions): Promise<IngestBatchResult> {
  // One cheap read when idle (a worker polls); the models are asked only when there is work.
  if (!(await ingestJobsOpen(db))) return { worked: false };
  const targets = await options.targets?.();
  const encoder = targets?.encoders.byRole.passage;
  // An external model has no tokenizer: its passages are split by words (or are the caller's own), as in ingest().
  const ingestOptions: IngestOptions = {
    ...options.ingest,
    tokenBudget: encoder && !isExternal(encoder) ? passageTokenBudget(encoder) : options.ingest.tokenBudget,
  };
  const step = await db.transaction(async (tx) => {
    const claimed = await claimIngestBatch(tx, {
      maxDocuments: options.maxDocuments ?? INGEST_BATCH_DOCUMENTS,
      maxBytes: options.maxBytes ?? INGEST_BATCH_BYTES,
    });
    if (!claimed) return undefined;
    options.onClaimed?.('finished' in claimed ? claimed.finished : claimed.jobId);
    if ('finished' in claimed) return { jobId: claimed.finished, finished: true, outcomes: [] as Outcome[] };
    const outcomes: Outcome[] = [];
    const toWrite: { outcome: Outcome; doc: PreparedDocument }[] = [];
    for (const { ordinal, input, bytes } of claimed.documents) {
      const given = (input ?? {}) as DocumentInput;
      const outcome: Outcome = {
        index: ordinal,
        status: 'failed',
        key: given.key ?? null,
        title: given.title ?? null,
        documentId: null,
        passages: 0,
        message: null,
        warnings: [],
        bytes,
      };
      outcomes.push(outcome);
      try {
        const doc = prepareDocument(given, ingestOptions, `#${ordinal}`);
        Object.assign(outcome, { key: doc.key, title: doc.title, warnings: doc.warnings ?? [] });
        toWrite.push({ outcome, doc });
      } catch (error) {
        outcome.message = messageOf(error);
      }
    }
    // The documents' own vectors (bring your own vectors) go to the job's model choice, resolved now;
    // the request checked them against it when it queued the job.
    const supplied = await suppliedVectorModels(tx, targets, claimed.vectorModel ?? undefined);
    const vectors = supplied.document || supplied.passage ? supplied : undefined;
    for (const group of distinctKeyGroups(toWrite)) await writeGroup(db, tx, group, vectors);
    await completeIngestBatch(tx, claimed.jobId, outcomes);
    options.beforeCommit?.(claimed.jobId);
    return { jobId: claimed.jobId, finished: false, outcomes };
  });
  if (!step) return { worked: false };
  const written = step.outcomes.flatMap((o) => (o.status !== 'failed' && o.documentId !== null ? [o.documentId] : []));
  if (written.length > 0) {
    await finishPending(db, {
      documentIds: written,
      embedWith: options.embed && targets ? async () => targets : undefined,
      embedBatchSize: options.embedBatchSize,
    });
  }
  return { worked: true, jobId: step.jobId, finished: step.finished, documents: step.outcomes.length };
}

/** Consecutive runs of documents with distinct keys (a key seen again starts the next run, written after). */
function distinctKeyGroups<T extends { doc: PreparedDocument }>(items: T[]): T[][] {
  const groups: T[][] = [];
  let keys = new Set<string>();
  for (const item of items) {
    if (groups.length === 0 || keys.has(item.doc.key)) {
      groups.push([]);
      keys = new Set();
    }
    groups.at(-1)!.push(item);
    keys.add(item.doc.key);
  }
  return groups;
}

/**
 * The group in one set-based write (store/bulk-write.ts; per document on Citus, whose shard
 * triggers keep BM25), under a savepoint; if it fails, each document under its own savepoint.
 */
async function writeGroup(
  db: Database,
  tx: Queryable,
  group: { outcome: Outcome; doc: PreparedDocument }[],
  vectors: SuppliedVectorModels | undefined,
): Promise<void> {
  const record = (outcome: Outcome, doc: PreparedDocument, result: WriteResult | Error) => {
    if (result instanceof Error) {
      outcome.message = `document "${doc.key}": ${messageOf(result)}`;
      return;
    }
    Object.assign(outcome, { status: result.status, documentId: result.documentId, passages: doc.passages.length });
  };
  if (db.distributed !== 'citus') {
    const results = await underSavepoint(tx, async () => {
      const r = await writeBatchIn(
        tx,
        group.map((g) => g.doc),
      );
      // The bulk write defers BM25 to its own step for this transaction; what follows (another
      // group written one document at a time) must fire the triggers again.
      await tx.query(`SELECT set_config('dhr.bm25_deferred', 'off', true)`);
      if (vectors)
        await writeSuppliedVectors(
          tx,
          vectors,
          r.map((w, i) => ({ documentId: w.documentId, doc: group[i].doc })),
        );
      return r;
    });
    if (!(results instanceof Error)) {
      group.forEach((g, i) => record(g.outcome, g.doc, results[i]));
      return;
    }
  }
  for (const { outcome, doc } of group) {
    const result = await underSavepoint(tx, async () => {
      const written = await writeDocumentIn(tx, doc);
      if (vectors) await writeSuppliedVectors(tx, vectors, [{ documentId: written.documentId, doc }]);
      return written;
    });
    record(outcome, doc, result);
  }
}

/** The statements of `fn` undone on failure, the transaction kept; a lost database or a store refusing writes still fails the batch. */
async function underSavepoint<T>(tx: Queryable, fn: () => Promise<T>): Promise<T | Error> {
  await tx.query('SAVEPOINT ingest_job_write');
  try {
    const result = await fn();
    await tx.query('RELEASE SAVEPOINT ingest_job_write');
    return result;
  } catch (error) {
    if (isDatabaseUnavailable(error) || isStorageFault(error)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT ingest_job_write');
    return error instanceof Error ? error : new Error(String(error));
  }
}
