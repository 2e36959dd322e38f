import { foldBm25Stats } from '../store/bm25-fold';
import type { Database, Queryable } from '../store/db';
import { indexLexical } from '../store/lexical';
import { clearFinished, pendingDocuments, type PendingDocument, type PendingQuery } from '../store/pending';
import { embedPending, type EmbeddingTargets, type EmbedProgress, type EmbedSummary } from './embed';

export interface FinishOptions extends Omit<PendingQuery, 'lock'> {
  /**
   * The models to embed with, asked with the documents that still need work once they are known
   * (so a caller loads models only when there is something to embed); undefined: index only.
   */
  embedWith?: (documentIds: readonly number[]) => Promise<EmbeddingTargets | undefined>;
  embedBatchSize?: number;
  onIndexed?: (passages: number) => void;
  onEmbedProgress?: (progress: EmbedProgress) => void;
  /** Stops embedding between batches (server shutdown); what is left stays recorded. */
  signal?: AbortSignal;
  /** Awaited before each embedding batch (EmbedOptions.yieldTo): a server's requests go first. */
  yieldTo?: () => Promise<void>;
}

export interface FinishResult {
  /** Recorded documents looked at. */
  documents: PendingDocument[];
  /** Passages given their full-text vector (and so their BM25 postings). */
  indexed: number;
  embedded: EmbedSummary | null;
  /** Records cleared: documents now complete for the active models. */
  cleared: number;
}

/**
 * Finishes what earlier writes left undone (migration 0008 records every written document): the
 * full-text index of its passages, then vectors for the models `embedWith` names, then clears the
 * records the rows show complete. Safe to run from any number of places at once: each step only
 * fills what is missing, and a record is cleared only for the write that was finished.
 */
export async function finishPending(db: Queryable, options: FinishOptions = {}): Promise<FinishResult> {
  const documents = await pendingDocuments(db, options);
  const result = await finishDocuments(db, documents, options);
  // After the writes and their index step have committed: the BM25 statistics rows concurrent
  // writers left in other slots go back into one (migration 0013; a no-op when there are none).
  await foldBm25Stats(db);
  return result;
}

/** citus: the store is distributed, for a transaction's Queryable, which does not say so (a Database does). */
async function finishDocuments(db: Queryable, documents: PendingDocument[], options: FinishOptions, citus?: boolean): Promise<FinishResult> {
  // With nothing recorded each step is a no-op, but the caller still learns which models were asked (embedded: zeros).
  const ids = documents.map((d) => d.documentId);
  const indexed = await indexLexical(db, ids, { citus });
  options.onIndexed?.(indexed);
  const targets = await options.embedWith?.(ids);
  const embedded = targets
    ? await embedPending(db, targets, {
        documentIds: ids,
        batchSize: options.embedBatchSize,
        onProgress: options.onEmbedProgress,
        signal: options.signal,
        yieldTo: options.yieldTo,
      })
    : null;
  const cleared = await clearFinished(db, documents);
  return { documents, indexed, embedded, cleared };
}

/**
 * One step of a background finisher (the job worker when it has no job): takes a few records left
 * alone for `olderThanSeconds` — their ingest died, or did not embed — with an advisory lock per
 * document so concurrent workers take different ones, and finishes them in one transaction.
 * Returns how many it cleared. Not a row lock on the records: a re-ingest of the document
 * re-records it (trigger) after replacing its passages, so it would wait for this whole step,
 * encoding included, while the step's vector write waits for the replaced passages: a deadlock
 * that failed the re-ingest. A re-ingest meanwhile costs this step a typed CONFLICT at worst.
 */
export async function finishPendingStep(
  db: Database,
  targets: EmbeddingTargets,
  options: { limit: number; olderThanSeconds: number; embedBatchSize?: number },
): Promise<number> {
  const cleared = await db.transaction(async (tx) => {
    const documents = await pendingDocuments(tx, { limit: options.limit, olderThanSeconds: options.olderThanSeconds, lock: 'advisory' });
    const { cleared } = await finishDocuments(
      tx,
      documents,
      { embedWith: async () => targets, embedBatchSize: options.embedBatchSize },
      db.distributed === 'citus',
    );
    return cleared;
  });
  // The idle worker's turn to fold BM25 statistics slots (outside the step's transaction, so the
  // fold's slot locks are held only for its own statement).
  await foldBm25Stats(db);
  return cleared;
}
