import { isExternal } from '../encoders/external';
import type { EncoderSet } from '../encoders/set';
import type { Database, Queryable } from '../store/db';
import { pendingCounts, pendingDocuments, pendingPassages, registerModel, type EmbeddingTargets } from '../store/embeddings';
import { encodeDocuments, encodePassages, type EncodedBatch } from './encode';
import { inFlightBatch, processStopping } from './stopping';

export type { EmbeddingTargets };

export async function prepareEmbedding(db: Database, encoders: EncoderSet): Promise<EmbeddingTargets> {
  const documentEncoder = encoders.byRole.document;
  const passageEncoder = encoders.byRole.passage;
  const document = await registerModel(db, documentEncoder, { maxTokens: documentEncoder.maxTokens('document') });
  const passage = passageEncoder === documentEncoder ? document : await registerModel(db, passageEncoder, { maxTokens: passageEncoder.maxTokens('passage') });
  return { encoders, document, passage };
}

export interface EmbedProgress {
  level: 'documents' | 'passages';
  /** Items of this level encoded so far (a row written meanwhile by another writer is encoded, and counted, but not written twice). */
  done: number;
  /** Items of this level that lacked a vector when the run began. */
  total: number;
}

export interface EmbedSummary {
  documents: number;
  passages: number;
  /** Texts cut to the role's token budget. */
  truncated: number;
  tokens: number;
}

export interface EmbedOptions {
  batchSize?: number;
  /** Only these documents (ingest embeds what it just wrote); default: everything pending. */
  documentIds?: number[];
  onProgress?: (progress: EmbedProgress) => void;
  /** Stops after the batch in flight; what was written stays. Process shutdown (pipeline/stopping.ts) stops it too. */
  signal?: AbortSignal;
  /**
   * Awaited before each batch (background embedding in a server: pipeline/foreground.ts), so
   * requests get the thread between batches. Each batch is read, encoded and then written in its
   * own statement: no transaction is open while the encoder runs.
   */
  yieldTo?: () => Promise<void>;
}

/**
 * Embeds what lacks a vector for the configured models: documents (from their summary) whose
 * content changed or that have none, and passages (title path + text) that have none, with their
 * sentence vectors (or those alone, for a passage embedded before they were stored). Unchanged
 * documents keep their vectors; each batch is written in one statement per kind.
 */
export async function embedPending(db: Queryable, targets: EmbeddingTargets, options: EmbedOptions = {}): Promise<EmbedSummary> {
  const batchSize = options.batchSize ?? 64;
  const only = options.documentIds;
  const summary: EmbedSummary = { documents: 0, passages: 0, truncated: 0, tokens: 0 };
  if (only && only.length === 0) return summary;
  const { encoders } = targets;
  const totals = await pendingCounts(db, targets.document.id, targets.passage.id, only, { sentences: true });
  const encoded = { documents: 0, passages: 0 };
  const track = (level: EmbedProgress['level'], items: number, { written, stats }: EncodedBatch) => {
    summary[level] += written;
    summary.truncated += stats.truncated;
    summary.tokens += stats.tokens;
    encoded[level] += items;
    // What the run did, against what it found to do (a row a job or an ingest wrote meanwhile is
    // encoded here too and counted, so the count reaches the total; `written` stays the summary's).
    options.onProgress?.({ level, done: Math.min(encoded[level], totals[level]), total: totals[level] });
  };

  // An external model's vectors come with ingest (the client's): nothing here can encode them. A
  // level with nothing pending is not read: on a store where all is embedded (every server start,
  // every ingest's own embedding) that read would probe every row for nothing.
  if (!isExternal(targets.document) && totals.documents > 0)
    await embedLevel(
      (after) => pendingDocuments(db, targets.document.id, batchSize, after, only),
      (batch) => encodeDocuments(db, encoders.byRole.document, targets.document, batch),
      (items, done) => track('documents', items, done),
      options,
    );
  if (!isExternal(targets.passage) && totals.passages > 0)
    await embedLevel(
      (after) => pendingPassages(db, targets.passage.id, batchSize, after, only),
      (batch) => encodePassages(db, encoders.byRole.passage, targets.passage, batch),
      (items, done) => track('passages', items, done),
      options,
    );
  return summary;
}

/** Reads pending rows in id order, a batch at a time, encodes and writes them until none are left. */
async function embedLevel<T extends { id: number }>(
  read: (afterId: number) => Promise<T[]>,
  encodeAndWrite: (batch: T[]) => Promise<EncodedBatch>,
  done: (items: number, batch: EncodedBatch) => void,
  options: Pick<EmbedOptions, 'signal' | 'yieldTo'>,
): Promise<void> {
  let after = 0;
  // Checked before each batch: shutdown lets the batch in flight finish (and waits for it), starts no other.
  for (;;) {
    await options.yieldTo?.();
    if (options.signal?.aborted || processStopping.aborted) return;
    const batch = await read(after);
    if (batch.length === 0) return;
    after = batch[batch.length - 1].id;
    done(batch.length, await inFlightBatch(encodeAndWrite(batch)));
  }
}
