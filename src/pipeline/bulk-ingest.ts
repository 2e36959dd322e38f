import { messageOf } from '../errors';
import { IngestError } from '../ingest/errors';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, PreparedDocument } from '../ingest/types';
import type { Database } from '../store/db';
import { isDatabaseUnavailable, isStorageFault } from '../store/faults';
import { writeBatch } from '../store/bulk-write';
import { writeDocument, type WriteResult } from '../store/write';
import { buildDeferredIndexes, deferPostingsIndexes, DEFER_INDEXES_FROM_PASSAGES } from '../store/deferred-indexes';
import { failed, summarize, type IngestOutcome, type IngestRunOptions, type IngestSummary } from './outcomes';

/** Passages per bulk transaction: large enough that per-statement costs vanish, small enough to keep a crash's loss and the locks short. */
export const BULK_BATCH_PASSAGES = 2_000;

export interface BulkRunOptions extends IngestRunOptions {
  /** Passages per batch transaction (default BULK_BATCH_PASSAGES); a batch holds at least one document. */
  batchPassages?: number;
  /** A batch's rows and postings are written, not yet committed (crash tests). */
  onBatchWritten?: (batch: number) => void;
  /** A batch committed. */
  onBatchCommitted?: (batch: number, documents: number) => void;
  /** Passages from which an ingest into an empty store indexes its postings once at the end (default DEFER_INDEXES_FROM_PASSAGES; 0: never). */
  deferIndexesFrom?: number;
}

interface Batch {
  number: number;
  items: { index: number; doc: PreparedDocument }[];
  /** Batches before this one that hold one of its keys: it is written after them (batch order per key). */
  after: Batch[];
  /** Settles once this batch is written (or failed). */
  finished: Promise<void>;
  finish: () => void;
}

/**
 * The write stage for many documents (`ingest` picks it; same outcomes as `ingestDocuments`):
 * documents are validated, then written a batch at a time, each batch one transaction with
 * multi-row statements and its BM25 postings and statistics built once (store/bulk-write.ts).
 * A batch that fails for anything but a lost database is written again one document at a time
 * (today's path), so a bad document fails alone. Committed batches are complete — rows, full-text
 * vectors, postings, statistics, pending records (for the embedding still to come) — and an
 * interrupted run leaves the batch in flight absent, so running it again finishes the job.
 */
export async function ingestBulk(
  db: Database,
  inputs: readonly (DocumentInput | IngestError)[],
  options: BulkRunOptions,
  labelOf: (index: number) => string = (i) => `#${i}`,
): Promise<IngestSummary> {
  const outcomes: IngestOutcome[] = new Array(inputs.length);
  const report = (outcome: IngestOutcome) => {
    outcomes[outcome.index] = outcome;
    options.onOutcome?.(outcome);
  };
  const prepared: { index: number; doc: PreparedDocument }[] = [];
  inputs.forEach((item, index) => {
    if (item instanceof IngestError) return report(failed(index, null, null, item.message));
    try {
      prepared.push({ index, doc: prepareDocument(item, options, labelOf(index)) });
    } catch (error) {
      report(failed(index, item.key ?? null, item.title ?? null, messageOf(error)));
    }
  });

  const batches = plan(prepared, Math.max(1, options.batchPassages ?? BULK_BATCH_PASSAGES));
  const passages = prepared.reduce((n, p) => n + p.doc.passages.length, 0);
  const deferFrom = options.deferIndexesFrom ?? DEFER_INDEXES_FROM_PASSAGES;
  const deferred = deferFrom > 0 && passages >= deferFrom && (await deferPostingsIndexes(db));
  const writeOne = async (batch: Batch): Promise<void> => {
    await Promise.all(batch.after.map((b) => b.finished));
    let results: (WriteResult | Error)[];
    try {
      results = await writeBatch(
        db,
        batch.items.map((i) => i.doc),
        { beforeCommit: () => options.onBatchWritten?.(batch.number), vectors: options.vectors },
      );
      options.onBatchCommitted?.(batch.number, batch.items.length);
    } catch (error) {
      // Not the documents' fault: the request fails typed (SERVICE_UNAVAILABLE, STORAGE_UNAVAILABLE).
      if (isDatabaseUnavailable(error) || isStorageFault(error)) throw error;
      // One document at a time, as ingestDocuments would: the bad one fails, the others go in.
      results = [];
      for (const { doc } of batch.items) {
        try {
          results.push(await writeDocument(db, doc, options.vectors));
        } catch (e) {
          if (isDatabaseUnavailable(e) || isStorageFault(e)) throw e;
          results.push(e as Error);
        }
      }
    }
    batch.items.forEach(({ index, doc }, i) => {
      const r = results[i];
      report(
        r instanceof Error
          ? failed(index, doc.key, doc.title, `document "${doc.key}": ${messageOf(r)}`)
          : {
              index,
              key: doc.key,
              title: doc.title,
              status: r.status,
              documentId: r.documentId,
              passages: doc.passages.length,
              message: null,
              warnings: doc.warnings ?? [],
            },
      );
    });
  };

  // PGlite has one connection; on a server a few batches overlap (their BM25 step queues on the statistics rows).
  const concurrency = db.kind === 'postgres' ? Math.max(1, options.concurrency ?? 4) : 1;
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      // Batches start in order, so one that waits for an earlier batch waits for one already running.
      const batch = batches[next++];
      try {
        await writeOne(batch);
      } finally {
        batch.finish();
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
  } catch (error) {
    // The record stays for the next open of the store when the database is what failed.
    if (deferred) await buildDeferredIndexes(db).catch(() => undefined);
    throw error;
  }
  if (deferred) await buildDeferredIndexes(db);
  return summarize(outcomes);
}

/** Consecutive documents up to `passages` passages a batch; a key seen again starts a new batch, written after the earlier one. */
function plan(prepared: { index: number; doc: PreparedDocument }[], passages: number): Batch[] {
  const batches: Batch[] = [];
  const lastBatchOfKey = new Map<string, Batch>();
  let current: Batch | undefined;
  let size = 0;
  for (const item of prepared) {
    const earlier = lastBatchOfKey.get(item.doc.key);
    if (!current || size >= passages || earlier === current) {
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      current = { number: batches.length + 1, items: [], after: [], finished, finish };
      batches.push(current);
      size = 0;
    }
    if (earlier && earlier !== current && !current.after.includes(earlier)) current.after.push(earlier);
    current.items.push(item);
    lastBatchOfKey.set(item.doc.key, current);
    size += item.doc.passages.length;
  }
  return batches;
}
