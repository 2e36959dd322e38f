import { passageEncodingText } from '../ingest/summary';
import type { EncoderSet } from '../encoders/set';
import type { Database } from './db';
import {
  pendingDocuments,
  pendingPassages,
  registerModel,
  writeDocumentEmbeddings,
  writePassageEmbeddings,
  type EmbeddingModelRow,
} from './embeddings';

/** The stored models that document and passage vectors go to. */
export interface EmbeddingTargets {
  encoders: EncoderSet;
  document: EmbeddingModelRow;
  passage: EmbeddingModelRow;
}

export async function prepareEmbedding(db: Database, encoders: EncoderSet): Promise<EmbeddingTargets> {
  const documentEncoder = encoders.byRole.document;
  const passageEncoder = encoders.byRole.passage;
  const document = await registerModel(db, documentEncoder, { maxTokens: documentEncoder.maxTokens('document') });
  const passage =
    passageEncoder === documentEncoder
      ? document
      : await registerModel(db, passageEncoder, { maxTokens: passageEncoder.maxTokens('passage') });
  return { encoders, document, passage };
}

export interface EmbedProgress {
  level: 'documents' | 'passages';
  done: number;
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
}

/**
 * Embeds what lacks a vector for the configured models: documents (from their summary) whose
 * content changed or that have none, and passages (title path + text) that have none. Unchanged
 * documents keep their vectors; each batch is written in one statement.
 */
export async function embedPending(db: Database, targets: EmbeddingTargets, options: EmbedOptions = {}): Promise<EmbedSummary> {
  const batchSize = options.batchSize ?? 64;
  const only = options.documentIds;
  const summary: EmbedSummary = { documents: 0, passages: 0, truncated: 0, tokens: 0 };
  if (only && only.length === 0) return summary;
  const { encoders } = targets;

  const [{ documents, passages }] = await db.query<{ documents: number; passages: number }>(
    `SELECT
       (SELECT count(*)::int FROM documents d LEFT JOIN document_embeddings e ON e.model_id = $1 AND e.document_id = d.id
         WHERE (e.document_id IS NULL OR e.content_hash <> d.content_hash) AND ($3::int[] IS NULL OR d.id = ANY($3::int[]))) AS documents,
       (SELECT count(*)::int FROM passages p WHERE ($3::int[] IS NULL OR p.document_id = ANY($3::int[]))
         AND NOT EXISTS (SELECT 1 FROM passage_embeddings e WHERE e.model_id = $2 AND e.passage_id = p.id)) AS passages`,
    [targets.document.id, targets.passage.id, only ?? null],
  );

  let after = 0;
  for (;;) {
    const batch = await pendingDocuments(db, targets.document.id, batchSize, after, only);
    if (batch.length === 0) break;
    after = batch[batch.length - 1].id;
    const { vectors, stats } = await encoders.byRole.document.encode(batch.map((d) => d.summary), 'document');
    summary.documents += await writeDocumentEmbeddings(
      db,
      targets.document,
      batch.map((d, i) => ({ documentId: d.id, contentHash: d.contentHash, vector: vectors[i] })),
    );
    summary.truncated += stats.truncated;
    summary.tokens += stats.tokens;
    options.onProgress?.({ level: 'documents', done: summary.documents, total: documents });
  }

  after = 0;
  for (;;) {
    const batch = await pendingPassages(db, targets.passage.id, batchSize, after, only);
    if (batch.length === 0) break;
    after = batch[batch.length - 1].id;
    const { vectors, stats } = await encoders.byRole.passage.encode(batch.map(passageEncodingText), 'passage');
    summary.passages += await writePassageEmbeddings(
      db,
      targets.passage,
      batch.map((p, i) => ({ passageId: p.id, documentId: p.documentId, vector: vectors[i] })),
    );
    summary.truncated += stats.truncated;
    summary.tokens += stats.tokens;
    options.onProgress?.({ level: 'passages', done: summary.passages, total: passages });
  }
  return summary;
}
