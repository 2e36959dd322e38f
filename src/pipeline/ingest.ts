import { messageOf } from '../errors';
import { IngestError } from '../ingest/errors';
import { isExternal } from '../encoders/external';
import type { Encoder } from '../encoders/types';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, IngestOptions } from '../ingest/types';
import { checkSuppliedVectors } from '../ingest/vectors';
import type { SuppliedVectorModels } from '../store/embeddings';
import type { Database } from '../store/db';
import { isDatabaseUnavailable, isStorageFault } from '../store/faults';
import { writeDocument } from '../store/write';
import { passageTokenBudget } from './token-budget';
import type { EmbeddingTargets, EmbedProgress, EmbedSummary } from './embed';
import { finishPending } from './pending';
import { ingestBulk } from './bulk-ingest';
import { failed, summarize, type IngestOutcome, type IngestRunOptions, type IngestSummary } from './outcomes';

export { INGEST_STATUSES, summarize, type IngestOutcome, type IngestRunOptions, type IngestStatus, type IngestSummary } from './outcomes';

/** What ingest reports as it goes, for progress bars and logs. */
export type IngestEvent =
  | { stage: 'write'; outcome: IngestOutcome; done: number; total: number }
  | { stage: 'index'; passages: number }
  /** Bulk path: a batch's rows and postings are written (committed: false, before its commit) or committed. */
  | { stage: 'batch'; batch: number; committed: boolean }
  | ({ stage: 'embed' } & EmbedProgress);

export interface IngestPipelineOptions extends IngestOptions {
  /** Documents written at once (PostgreSQL only). */
  concurrency?: number;
  /** How a failed input is named in its message (default `#index`; the CLI uses file:line). */
  labelOf?: (index: number) => string;
  /**
   * The models to embed with, asked once the writes have committed (an activation that landed
   * meanwhile must get their vectors) with the documents that still need work; absent, or
   * resolving to undefined: no embedding now (the documents stay recorded as pending).
   */
  embedWith?: (documentIds: readonly number[]) => Promise<EmbeddingTargets | undefined>;
  /** Also finish every other pending document of the store, not only this batch's (`dhr ingest`). */
  finishAll?: boolean;
  embedBatchSize?: number;
  /**
   * The passage encoder to split passages for (its token budget), asked once before anything is
   * prepared; absent or undefined: passages are split by words only (`tokenBudget` if given).
   */
  splitFor?: () => Promise<Encoder | undefined>;
  /**
   * The external models that take the documents' own vectors (bring your own vectors), asked once
   * before anything is written; every vector is checked against them first (src/ingest/vectors.ts),
   * so a bad or missing one refuses the whole ingest (BAD_USER_INPUT naming it) and writes nothing.
   * Absent: no level takes vectors, and a document that brings one is refused.
   */
  vectorsFor?: () => Promise<SuppliedVectorModels | undefined>;
  onEvent?: (event: IngestEvent) => void;
  /**
   * The set-based bulk path (`pipeline/bulk-ingest.ts`): true or false forces it on or off;
   * absent, it is taken for BULK_FROM_DOCUMENTS documents or more, except on Citus, whose shard
   * triggers keep BM25 on each shard.
   */
  bulk?: boolean;
  /** Passages per bulk transaction (default BULK_BATCH_PASSAGES). */
  batchPassages?: number;
  /** Bulk path: passages from which a load into an empty store indexes its postings once at the end (default DEFER_INDEXES_FROM_PASSAGES; 0: never). */
  deferIndexesFrom?: number;
}

/** From this many documents an ingest takes the bulk path; fewer keep one transaction per document. */
export const BULK_FROM_DOCUMENTS = 16;

export interface IngestResult extends IngestSummary {
  /** Passages given a full-text vector (by the bulk write, and by the index step). */
  indexed: number;
  /** Null when no models were given to embed with, or nothing needed vectors. */
  embedded: EmbedSummary | null;
  /** Unchanged documents whose index or vectors an earlier, interrupted run had left missing. */
  resumed: number;
  /** Documents now complete (indexed and embedded for the active models) whose pending record was cleared. */
  pendingFinished: number;
  /** Wall time of each stage, seconds. */
  seconds: { write: number; index: number; embed: number };
}

/**
 * The ingest pipeline every entry point uses (GraphQL mutation, `dhr ingest`, the demo corpus,
 * eval): prepare and write each document, then finish every document of the batch that is
 * recorded as pending (`pipeline/pending.ts`: full-text vectors, then vectors for the models
 * `embedWith` names). A run killed at any step leaves records that the next run, the server at
 * start or a job worker finishes.
 */
export async function ingest(db: Database, inputs: readonly (DocumentInput | IngestError)[], options: IngestPipelineOptions): Promise<IngestResult> {
  const clock = stopwatch();
  let done = 0;
  const splitter = await options.splitFor?.();
  // An external model has no tokenizer: its passages are split by words (or are the caller's own).
  const tokenBudget = splitter && !isExternal(splitter) ? passageTokenBudget(splitter) : options.tokenBudget;
  const vectors = (await options.vectorsFor?.()) ?? {};
  checkSuppliedVectors(inputs, vectors, options.labelOf);
  const bulk = options.bulk ?? (inputs.length >= BULK_FROM_DOCUMENTS && db.distributed !== 'citus');
  const runOptions = {
    ...options,
    tokenBudget,
    vectors: vectors.document || vectors.passage ? vectors : undefined,
    onOutcome: (outcome: IngestOutcome) => options.onEvent?.({ stage: 'write', outcome, done: ++done, total: inputs.length }),
  };
  const summary = bulk
    ? await ingestBulk(
        db,
        inputs,
        {
          ...runOptions,
          onBatchWritten: (batch) => options.onEvent?.({ stage: 'batch', batch, committed: false }),
          onBatchCommitted: (batch) => options.onEvent?.({ stage: 'batch', batch, committed: true }),
        },
        options.labelOf,
      )
    : await ingestDocuments(db, inputs, runOptions, options.labelOf);
  // The bulk path writes passages with their full-text vector (a batch written again one
  // document at a time, after a failure, leaves its passages to the index step below).
  const indexedByWrite = bulk ? await countIndexed(db, summary.outcomes) : 0;
  const write = clock();
  let index = 0;
  // Not only what this run wrote: documents it found unchanged may have been written by a run
  // that died before indexing or embedding them (their record says so), and are finished too.
  const finished = await finishPending(db, {
    documentIds: options.finishAll ? undefined : batchDocumentIds(summary.outcomes),
    embedWith: options.embedWith,
    embedBatchSize: options.embedBatchSize,
    onIndexed: (passages) => {
      index = clock();
      options.onEvent?.({ stage: 'index', passages });
    },
    onEmbedProgress: (progress) => options.onEvent?.({ stage: 'embed', ...progress }),
  });
  const recorded = new Set(finished.documents.map((d) => d.documentId));
  const resumed = summary.outcomes.filter((o) => o.status === 'unchanged' && o.documentId !== null && recorded.has(o.documentId)).length;
  const embed = clock();
  return {
    ...summary,
    indexed: indexedByWrite + finished.indexed,
    embedded: finished.embedded,
    resumed,
    pendingFinished: finished.cleared,
    seconds: { write, index, embed },
  };
}

/** Passages the bulk write gave their full-text vector: those of the documents it created or updated that have one. */
async function countIndexed(db: Database, outcomes: readonly IngestOutcome[]): Promise<number> {
  const ids = outcomes.flatMap((o) => ((o.status === 'created' || o.status === 'updated') && o.documentId !== null ? [o.documentId] : []));
  if (ids.length === 0) return 0;
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages WHERE document_id = ANY($1::int[]) AND search IS NOT NULL', [ids]);
  return n;
}

/** Documents of the batch that were written, now or before (failed ones have nothing to finish). */
export function batchDocumentIds(outcomes: readonly IngestOutcome[]): number[] {
  return outcomes.flatMap((o) => (o.status !== 'failed' && o.documentId !== null ? [o.documentId] : []));
}

/** Seconds since the previous call (or since it was made). */
function stopwatch(): () => number {
  let last = process.hrtime.bigint();
  return () => {
    const now = process.hrtime.bigint();
    const seconds = Number(now - last) / 1e9;
    last = now;
    return seconds;
  };
}

/**
 * The write stage alone: each document is validated, then written in its own transaction, so a bad
 * document fails alone and leaves nothing half-written while the others go in.
 */
export async function ingestDocuments(
  db: Database,
  inputs: readonly (DocumentInput | IngestError)[],
  options: IngestRunOptions,
  labelOf: (index: number) => string = (i) => `#${i}`,
): Promise<IngestSummary> {
  const outcomes: IngestOutcome[] = new Array(inputs.length);
  const concurrency = db.kind === 'postgres' ? Math.max(1, options.concurrency ?? 4) : 1;
  // Two documents with the same key in one batch are written in batch order, never concurrently.
  const keyChains = new Map<string, Promise<unknown>>();
  let next = 0;

  const one = async (index: number): Promise<IngestOutcome> => {
    const item = inputs[index];
    if (item instanceof IngestError) return failed(index, null, null, item.message);
    let prepared;
    try {
      prepared = prepareDocument(item, options, labelOf(index));
    } catch (error) {
      return failed(index, item.key ?? null, item.title ?? null, messageOf(error));
    }
    const previous = keyChains.get(prepared.key) ?? Promise.resolve();
    const write = previous.then(() => writeDocument(db, prepared, options.vectors));
    keyChains.set(
      prepared.key,
      write.catch(() => undefined),
    );
    try {
      const { status, documentId } = await write;
      return {
        index,
        key: prepared.key,
        title: prepared.title,
        status,
        documentId,
        passages: prepared.passages.length,
        message: null,
        warnings: prepared.warnings ?? [],
      };
    } catch (error) {
      // A lost database or a store refusing writes (read-only, full) fails the whole request
      // (SERVICE_UNAVAILABLE, STORAGE_UNAVAILABLE), not one document with the driver's text.
      if (isDatabaseUnavailable(error) || isStorageFault(error)) throw error;
      return failed(index, prepared.key, prepared.title, `document "${prepared.key}": ${messageOf(error)}`);
    }
  };

  const worker = async () => {
    while (next < inputs.length) {
      const index = next++;
      const outcome = await one(index);
      outcomes[index] = outcome;
      options.onOutcome?.(outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, worker));
  return summarize(outcomes);
}
