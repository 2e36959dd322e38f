import type { EncodeStats, Encoder } from '../encoders/types';
import { passageEncodingText } from '../ingest/summary';
import type { Queryable } from '../store/db';
import { SENTENCE_BATCH, sentencesToStore, spansToStore } from '../retrieval/sentence-vectors';
import { BulkThreadEncoder } from '../encoders/bulk-thread';
import { tagSpansInThread } from './span-thread';
import { summaryPieces } from './summary-pieces';
import { writeDocumentEmbeddings, writePassageEmbeddings, type EmbeddingModelRow } from '../store/embeddings';
import { writeSentenceEmbeddings, type StoredSpans } from '../store/sentence-embeddings';

/**
 * The one encode-and-write step, shared by inline embedding (ingest, `dhr embed`) and the job
 * worker: encode a batch with the model's encoder, write the vectors in one statement.
 */

export interface DocumentItem {
  id: number;
  title: string;
  summary: string;
  contentHash: string;
}

export interface PassageItem {
  id: number;
  documentId: number;
  text: string;
  titlePath: string[];
  /** It has its vector / its sentence vectors for the model already (absent: no); without `replace` those are kept. */
  hasVector?: boolean;
  hasSentences?: boolean;
}

export interface EncodedBatch {
  /** Vectors written (rows changed or deleted since they were read are skipped). */
  written: number;
  stats: EncodeStats;
}

export interface EncodeWriteOptions {
  /** Overwrite existing passage and sentence vectors (a re-embedding job of scope ALL). */
  replace?: boolean;
  /** Called once the batch is encoded, before it is written (the worker's crash trace). */
  onEncoded?: (items: readonly { id: number }[]) => void;
}

const NONE: EncodeStats = { texts: 0, tokens: 0, truncated: 0 };

/**
 * Documents are encoded from their summary; a summary over the encoder's budget also from its
 * pieces (several summary vectors).
 */
export async function encodeDocuments(
  db: Queryable,
  encoder: Encoder,
  model: EmbeddingModelRow,
  items: readonly DocumentItem[],
  options: EncodeWriteOptions = {},
): Promise<EncodedBatch> {
  const pieces = items.map((d) => summaryPieces(encoder, d.title, d.summary));
  const { vectors, stats } = items.length
    ? await encoder.encode(
        items.map((d) => d.summary),
        'document',
      )
    : { vectors: [], stats: NONE };
  const flat = pieces.flat();
  const pieceVectors = flat.length ? (await encoder.encode(flat, 'document')).vectors : [];
  options.onEncoded?.(items);
  let at = 0;
  const written = await writeDocumentEmbeddings(
    db,
    model,
    items.map((d, i) => ({ documentId: d.id, contentHash: d.contentHash, vector: vectors[i], pieces: pieceVectors.slice(at, (at += pieces[i].length)) })),
  );
  // Stats (texts, tokens, clipped share) stay about summaries, as the eval report reads them.
  return { written, stats };
}

/**
 * Passages are encoded from their title path and text, and their first sentences (splitSentences,
 * as answer highlights split them; at most SENTENCE_VECTOR_CAP) each on its own, so a highlight
 * reads stored sentence vectors instead of encoding at query time. What an item has already is
 * kept unless `replace`. `written`: passages that got their vector, or (having one) their
 * sentence vectors.
 */
export async function encodePassages(
  db: Queryable,
  encoder: Encoder,
  model: EmbeddingModelRow,
  items: readonly PassageItem[],
  options: EncodeWriteOptions = {},
): Promise<EncodedBatch> {
  const needVector = items.filter((p) => options.replace || !p.hasVector);
  const needSentences = items.filter((p) => options.replace || !p.hasVector || !p.hasSentences);
  const { vectors, stats } = needVector.length ? await encoder.encode(needVector.map(passageEncodingText), 'passage') : { vectors: [], stats: NONE };
  const sentences = await encodeSentences(encoder, needSentences);
  options.onEncoded?.(needSentences);
  const written = await writePassageEmbeddings(
    db,
    model,
    needVector.map((p, i) => ({ passageId: p.id, documentId: p.documentId, vector: vectors[i] })),
    { replace: options.replace },
  );
  const vectorWritten = new Set(needVector.map((p) => p.id));
  // Stats (texts, tokens, clipped share) stay about passages, as the eval report reads them.
  const sentencesOnly = await writeSentenceEmbeddings(
    db,
    model,
    needSentences.map((p, i) => ({ passageId: p.id, documentId: p.documentId, ...sentences[i], counted: !vectorWritten.has(p.id) })),
  );
  return { written: written + sentencesOnly, stats };
}

/**
 * The sentences of each passage that get stored vectors, encoded in one call, and their typed
 * spans (tagged while the encoder runs: with a bulk-thread encoder, a server's, both run off the
 * readers' thread, the tagging in a thread of its own, span-thread.ts).
 */
export async function encodeSentences(
  encoder: Encoder,
  items: readonly { text: string }[],
  options: { spans?: boolean } = {},
): Promise<{ splitHash: string; vectors: Float32Array[]; spans?: StoredSpans }[]> {
  const split = items.map((p) => sentencesToStore(p.text));
  const texts = split.flatMap((s) => s.texts);
  const [encoded, spans] = await Promise.all([
    texts.length ? encoder.encode(texts, 'passage', { batchSize: SENTENCE_BATCH }) : { vectors: [] as Float32Array[] },
    options.spans === false ? null : (encoder instanceof BulkThreadEncoder ? tagSpansInThread : spansToStore)(split.map((s) => s.texts)),
  ]);
  let at = 0;
  return split.map((s, i) => ({ splitHash: s.hash, vectors: encoded.vectors.slice(at, (at += s.texts.length)), spans: spans?.[i] }));
}
