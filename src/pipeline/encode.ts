import type { EncodeStats, Encoder } from '../encoders/types';
import { passageEncodingText } from '../ingest/summary';
import type { Queryable } from '../store/db';
import { summaryPieces } from './summary-pieces';
import { writeDocumentEmbeddings, writePassageEmbeddings, type EmbeddingModelRow } from '../store/embeddings';

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
}

export interface EncodedBatch {
  /** Vectors written (rows changed or deleted since they were read are skipped). */
  written: number;
  stats: EncodeStats;
}

export interface EncodeWriteOptions {
  /** Overwrite existing passage vectors (a re-embedding job of scope ALL). */
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
  const { vectors, stats } = items.length ? await encoder.encode(items.map((d) => d.summary), 'document') : { vectors: [], stats: NONE };
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

/** Passages are encoded from their title path and text. */
export async function encodePassages(
  db: Queryable,
  encoder: Encoder,
  model: EmbeddingModelRow,
  items: readonly PassageItem[],
  options: EncodeWriteOptions = {},
): Promise<EncodedBatch> {
  const { vectors, stats } = items.length ? await encoder.encode(items.map(passageEncodingText), 'passage') : { vectors: [], stats: NONE };
  options.onEncoded?.(items);
  const written = await writePassageEmbeddings(
    db,
    model,
    items.map((p, i) => ({ passageId: p.id, documentId: p.documentId, vector: vectors[i] })),
    { replace: options.replace },
  );
  return { written, stats };
}
