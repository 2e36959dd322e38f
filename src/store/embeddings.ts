import type { QueryAdapter } from '../adapters/linear';
import type { EncoderSet } from '../encoders/set';
import type { Encoder, EncoderRole } from '../encoders/types';
import type { PreparedDocument } from '../ingest/types';
import { DomainError, ErrorCode } from '../errors';
import type { EmbeddingModel } from '../generated/prisma/client';
import type { Database, Queryable } from './db';
import { columnsOf, DOCUMENT_ROW, PASSAGE_ROW, selectList, type DocumentRow, type PassageRow } from './rows';
import { firstOrdinals, float4Array, vectorAt, vectorLiteral, vectorsAt } from './vector';

export { vectorLiteral };

/** A stored model disagrees with the encoder now configured under its name. */
export class EmbeddingModelError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.CONFLICT, message);
    this.name = 'EmbeddingModelError';
  }
}

/**
 * A registered model: Prisma's model but its registration time, its settings a JSON object;
 * source is 'use-lite' or a model folder, null for rows registered before sources were recorded.
 */
export type EmbeddingModelRow = Omit<EmbeddingModel, 'settings' | 'createdAt'> & { settings: Record<string, unknown> };

export const MODEL_ROW = columnsOf<EmbeddingModelRow>()({
  id: 'int',
  name: 'text',
  runtime: 'text',
  dimension: 'int',
  checksum: 'text',
  settings: 'jsonb',
  source: 'text',
});

/** The encoders in use and the stored models their document and passage vectors go to. */
export interface EmbeddingTargets {
  encoders: EncoderSet;
  document: EmbeddingModelRow;
  passage: EmbeddingModelRow;
  /** The active query-side adapter, when it fits these models; retrieval applies it to question vectors. */
  adapter?: QueryAdapter;
  /** Why the active adapter is not applied (it was trained for other models); retrieval passes it on as a warning. */
  adapterWarning?: string;
}

export const MODEL_COLUMNS = selectList(MODEL_ROW, '');

/** HNSW build settings (pgvector defaults); ef_search is per query, in retrieval. */
const HNSW = { m: 16, efConstruction: 64 };

/**
 * Registers the encoder as an embedding model (or finds it), and makes sure its per-model HNSW
 * indexes exist. The same name with another dimension or other weights is refused: its stored
 * vectors would silently mix with new ones.
 */
export async function registerModel(db: Database, encoder: Encoder, settings: Record<string, unknown> = {}): Promise<EmbeddingModelRow> {
  const model = await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO embedding_models (name, runtime, dimension, checksum, settings, source)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6) ON CONFLICT (name) DO NOTHING`,
      [encoder.name, encoder.runtime, encoder.dimension, encoder.checksum, JSON.stringify(settings), encoder.source ?? null],
    );
    // A model registered before sources were recorded, or whose folder moved, learns where it lives now.
    if (encoder.source) {
      await tx.query('UPDATE embedding_models SET source = $2 WHERE name = $1 AND checksum = $3 AND source IS DISTINCT FROM $2', [
        encoder.name,
        encoder.source,
        encoder.checksum,
      ]);
    }
    const [row] = await tx.query<EmbeddingModelRow>(`SELECT ${MODEL_COLUMNS} FROM embedding_models WHERE name = $1`, [encoder.name]);
    return row;
  });
  if (model.dimension !== encoder.dimension) {
    throw new EmbeddingModelError(
      `model "${encoder.name}" is stored with dimension ${model.dimension}, but the configured encoder gives ${encoder.dimension}: ` +
        'register it under another name (its stored embeddings cannot be reused)',
    );
  }
  if (model.checksum !== encoder.checksum) {
    throw new EmbeddingModelError(
      `model "${encoder.name}" is stored with files of checksum ${model.checksum.slice(0, 12)}…, but the configured files have ` +
        `${encoder.checksum.slice(0, 12)}…: the weights changed, so its stored embeddings are not comparable; register the new files under another name`,
    );
  }
  await ensureIndexes(db, model);
  return model;
}

/** Partial expression indexes: one HNSW graph per model and level, inner-product ops (vectors are unit length). */
export async function ensureIndexes(db: Queryable, model: EmbeddingModelRow): Promise<void> {
  const id = Number(model.id);
  const dim = Number(model.dimension);
  for (const table of ['document_embeddings', 'passage_embeddings']) {
    await db.query(
      `CREATE INDEX IF NOT EXISTS ${table}_hnsw_m${id} ON ${table}
       USING hnsw ((embedding::vector(${dim})) vector_ip_ops) WITH (m = ${HNSW.m}, ef_construction = ${HNSW.efConstruction})
       WHERE model_id = ${id}`,
    );
  }
}

export async function modelByName(db: Queryable, name: string): Promise<EmbeddingModelRow | undefined> {
  const [row] = await db.query<EmbeddingModelRow>(`SELECT ${MODEL_COLUMNS} FROM embedding_models WHERE name = $1`, [name]);
  return row;
}

const DOCUMENT_PENDING = `FROM documents d LEFT JOIN document_embeddings e ON e.model_id = $1 AND e.document_id = d.id
  WHERE (e.document_id IS NULL OR e.content_hash <> d.content_hash)`;
const HAS_VECTOR = 'EXISTS (SELECT 1 FROM passage_embeddings e WHERE e.model_id = $1 AND e.document_id = p.document_id AND e.passage_id = p.id)';
/** The passage's sentence vectors for the model (migration 0018). */
const HAS_SENTENCES = 'EXISTS (SELECT 1 FROM sentence_embeddings s WHERE s.model_id = $1 AND s.document_id = p.document_id AND s.passage_id = p.id)';
/**
 * The same tests for a batch read (the next rows after an id, and what each has), probed row by
 * row: OFFSET 0 keeps the planner from replacing a probe by a hashed subplan that reads every
 * vector of the model. PGlite never runs ANALYZE, and without statistics the planner takes a
 * model's vectors for 0.5 % of their table and hashes them whole, in every batch read, so each
 * batch of the demo's first start read all the vectors written before it (on the whole demo store,
 * 800 passages embedded at 18 passages/s, 33 of their 44 s in those reads; probed, 79 passages/s;
 * docs/benchmarks.md). Counting everything still may hash.
 */
const probed = (test: string) => test.replace(/\)$/, ' OFFSET 0)');
const DOCUMENT_PENDING_PROBED = `FROM documents d WHERE NOT EXISTS (SELECT 1 FROM document_embeddings e
  WHERE e.model_id = $1 AND e.document_id = d.id AND e.content_hash = d.content_hash OFFSET 0)`;
const PASSAGE_PENDING = `FROM passages p WHERE NOT ${HAS_VECTOR}`;
/** What embedding fills: a passage without its vector, or without its sentence vectors (a store older than 0018). */
const PASSAGE_OR_SENTENCES_PENDING = `FROM passages p WHERE NOT (${HAS_VECTOR} AND ${HAS_SENTENCES})`;

/**
 * How many documents and passages lack a current vector (optionally among some documents).
 * `sentences`: passages whose sentence vectors are missing count too (what embedPending fills);
 * activation asks without it, since highlights encode what has no stored sentence vectors.
 */
export async function pendingCounts(
  db: Queryable,
  documentModelId: number,
  passageModelId: number,
  onlyDocumentIds?: number[],
  options: { sentences?: boolean } = {},
): Promise<{ documents: number; passages: number }> {
  const only = onlyDocumentIds ?? null;
  const [{ n: documents }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n ${DOCUMENT_PENDING} AND ($2::int[] IS NULL OR d.id = ANY($2::int[]))`, [
    documentModelId,
    only,
  ]);
  const [{ n: passages }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n ${options.sentences ? PASSAGE_OR_SENTENCES_PENDING : PASSAGE_PENDING} AND ($2::int[] IS NULL OR p.document_id = ANY($2::int[]))`,
    [passageModelId, only],
  );
  return { documents, passages };
}

/** What a document's vector is computed from. */
export type PendingDocument = Pick<DocumentRow, 'id' | 'title' | 'summary' | 'contentHash'>;
/** The columns a document to embed is read with. */
export const DOCUMENT_TO_EMBED = selectList(DOCUMENT_ROW, 'd', ['id', 'title', 'summary', 'contentHash']);

/** Documents with no embedding for the model, or one computed from other content. */
export function pendingDocuments(db: Queryable, modelId: number, limit: number, afterId = 0, onlyIds?: number[]): Promise<PendingDocument[]> {
  return db.query<PendingDocument>(
    `SELECT ${DOCUMENT_TO_EMBED} ${DOCUMENT_PENDING_PROBED}
       AND d.id > $3 AND ($4::int[] IS NULL OR d.id = ANY($4::int[]))
     ORDER BY d.id LIMIT $2`,
    [modelId, limit, afterId, onlyIds ?? null],
  );
}

export interface PendingPassage extends Pick<PassageRow, 'id' | 'documentId' | 'text' | 'titlePath'> {
  /** Whether it has its vector, and its sentence vectors, for the model already. */
  hasVector: boolean;
  hasSentences: boolean;
}

/** The columns a passage to embed is read with (the model is $1). */
export const PASSAGE_TO_EMBED = `${selectList(PASSAGE_ROW, 'p', ['id', 'documentId', 'text', 'titlePath'])},
  ${probed(HAS_VECTOR)} AS "hasVector", ${probed(HAS_SENTENCES)} AS "hasSentences"`;

/**
 * Passages with no embedding, or no sentence vectors, for the model (a changed document's passages
 * are new rows).
 */
export function pendingPassages(db: Queryable, modelId: number, limit: number, afterId = 0, onlyDocumentIds?: number[]): Promise<PendingPassage[]> {
  return db.query<PendingPassage>(
    `SELECT ${PASSAGE_TO_EMBED} FROM passages p WHERE NOT (${probed(HAS_VECTOR)} AND ${probed(HAS_SENTENCES)})
       AND p.id > $3 AND ($4::int[] IS NULL OR p.document_id = ANY($4::int[]))
     ORDER BY p.id LIMIT $2`,
    [modelId, limit, afterId, onlyDocumentIds ?? null],
  );
}

/**
 * Writes document vectors (and the summary's pieces' vectors, when it has pieces); a row whose
 * document changed (or vanished) since it was read is skipped, so a stale vector is never stored
 * under a new hash (writeSkippingVanished: also when that change is still in flight).
 */
export async function writeDocumentEmbeddings(
  db: Queryable,
  model: EmbeddingModelRow,
  rows: { documentId: number; contentHash: string; vector: Float32Array; pieces?: Float32Array[] }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  checkDimensions(
    model,
    rows.flatMap((r) => [r.vector, ...(r.pieces ?? [])]),
  );
  // One float4Array: the rows' vectors (1 … n), then their pieces' (a row's from firstPiece on).
  const pieceCounts = rows.map((r) => r.pieces?.length ?? 0);
  const dim = model.dimension;
  return writeSkippingVanished(
    db,
    `WITH w AS (
       INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding, summary_pieces)
       SELECT $1, u.document_id, u.content_hash, ${vectorAt('$4', dim, 'u.o')}, ${vectorsAt('$4', dim, 'u.first_piece', 'u.pieces')}
       FROM unnest($2::int[], $3::text[], $5::int[], $6::int[]) WITH ORDINALITY AS u(document_id, content_hash, first_piece, pieces, o)
       JOIN documents d ON d.id = u.document_id AND d.content_hash = u.content_hash
       ON CONFLICT (model_id, document_id) DO UPDATE
         SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, summary_pieces = EXCLUDED.summary_pieces,
             embedded_at = EXCLUDED.embedded_at
       RETURNING 1)
     SELECT count(*)::int AS n FROM w`,
    [
      model.id,
      rows.map((r) => r.documentId),
      rows.map((r) => r.contentHash),
      float4Array([...rows.map((r) => r.vector), ...rows.flatMap((r) => r.pieces ?? [])]),
      firstOrdinals(pieceCounts, rows.length + 1),
      pieceCounts,
    ],
  );
}

/**
 * (Both writers: EXCLUDED.embedded_at is the proposed row's now(); Citus refuses now() itself in
 * DO UPDATE. The passage key is named, not listed: on Citus it also holds document_id.)
 *
 * Writes passage vectors; passages deleted since they were read, or being deleted meanwhile (a
 * concurrent re-ingest of their document), are skipped (writeSkippingVanished). `replace` overwrites
 * an existing vector (a re-embedding job of scope ALL); otherwise the first one stays.
 */
export async function writePassageEmbeddings(
  db: Queryable,
  model: EmbeddingModelRow,
  rows: { passageId: number; documentId: number; vector: Float32Array }[],
  options: { replace?: boolean } = {},
): Promise<number> {
  if (rows.length === 0) return 0;
  checkDimensions(
    model,
    rows.map((r) => r.vector),
  );
  return writeSkippingVanished(
    db,
    `WITH w AS (
       INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, u.passage_id, p.document_id, ${vectorAt('$4', model.dimension, 'u.o')}
       FROM unnest($2::int[], $3::int[]) WITH ORDINALITY AS u(passage_id, document_id, o)
       JOIN passages p ON p.document_id = u.document_id AND p.id = u.passage_id
       ON CONFLICT ON CONSTRAINT passage_embeddings_pkey
         ${options.replace ? 'DO UPDATE SET embedding = EXCLUDED.embedding, embedded_at = EXCLUDED.embedded_at' : 'DO NOTHING'}
       RETURNING 1)
     SELECT count(*)::int AS n FROM w`,
    [model.id, rows.map((r) => r.passageId), rows.map((r) => r.documentId), float4Array(rows.map((r) => r.vector))],
  );
}

/** The external models that take the vectors an ingest supplies, per level (none: the level takes none). */
export interface SuppliedVectorModels {
  document?: EmbeddingModelRow;
  passage?: EmbeddingModelRow;
}

/**
 * Writes the vectors a caller supplied with its documents (external models), inside the
 * transaction that wrote them (or found them unchanged), so a document and its vectors commit
 * together. Passages are matched by reading order: the k-th prepared passage is the stored passage
 * of ordinal k (the same content hash means the same split). Vectors replace earlier ones: a
 * re-ingest with the same text and new vectors updates them.
 */
export async function writeSuppliedVectors(
  tx: Queryable,
  models: SuppliedVectorModels,
  written: readonly { documentId: number; doc: PreparedDocument }[],
): Promise<void> {
  if (models.document) {
    const rows = written.flatMap(({ documentId, doc }) => (doc.vector ? [{ documentId, contentHash: doc.contentHash, vector: doc.vector }] : []));
    await writeDocumentEmbeddings(tx, models.document, rows);
  }
  const withPassages = models.passage ? written.filter((w) => w.doc.passages.some((p) => p.vector)) : [];
  if (withPassages.length === 0) return;
  const stored = await tx.query<{ documentId: number; id: number }>(
    'SELECT document_id AS "documentId", id FROM passages WHERE document_id = ANY($1::int[]) ORDER BY document_id, ordinal',
    [withPassages.map((w) => w.documentId)],
  );
  const ids = new Map<number, number[]>();
  for (const p of stored) ids.set(p.documentId, [...(ids.get(p.documentId) ?? []), p.id]);
  const rows = withPassages.flatMap(({ documentId, doc }) => {
    const passageIds = ids.get(documentId) ?? [];
    if (passageIds.length !== doc.passages.length) {
      throw new DomainError(ErrorCode.CONFLICT, `document "${doc.key}" was re-written by another request while its vectors were being stored; ingest it again`);
    }
    return doc.passages.flatMap((p, k) => (p.vector ? [{ passageId: passageIds[k], documentId, vector: p.vector }] : []));
  });
  await writePassageEmbeddings(tx, models.passage!, rows, { replace: true });
}

/** Runs of a vector write before a row that keeps vanishing under it is answered with CONFLICT. */
const WRITE_ATTEMPTS = 5;

/**
 * Runs a vector write: one statement whose join inserts only rows whose passage or document is
 * still there. A row removed by a transaction that commits after the statement took its snapshot
 * (a re-ingest of the key replacing the passages, a delete) passes the join but fails the foreign
 * key check, which waits for that transaction; run again, the statement sees the removal and skips
 * the row (the newer version's own ingest embeds its passages). The same holds on Citus, whose
 * shards check the foreign keys. The foreign key checks lock the passages in insertion order, a
 * re-ingest's delete in its own, so the two can also deadlock: the statement the server rolled
 * back runs again the same way. Inside a caller's transaction the statement cannot run again (the
 * transaction is aborted): the caller gets a typed CONFLICT to retry, as after too many runs.
 */
export async function writeSkippingVanished(db: Queryable, sql: string, params: unknown[]): Promise<number> {
  const autocommit = typeof (db as Partial<Database>).transaction === 'function';
  for (let attempt = 1; ; attempt++) {
    try {
      const [{ n }] = await db.query<{ n: number }>(sql, params);
      return n;
    } catch (error) {
      if (!isForeignKeyViolation(error) && !isDeadlock(error)) throw error;
      if (!autocommit || attempt >= WRITE_ATTEMPTS) {
        throw new DomainError(
          ErrorCode.CONFLICT,
          'documents were re-written or deleted by another request while their vectors were being stored; retry (what was written stays recorded as pending)',
          { details: { retry: true } },
        );
      }
    }
  }
}

/** SQLSTATE 40P01: this statement was the one rolled back to break a deadlock. */
function isDeadlock(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '40P01';
}

/** SQLSTATE 23503 (both drivers put it in `code`). */
function isForeignKeyViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23503';
}

function checkDimensions(model: EmbeddingModelRow, vectors: Float32Array[]): void {
  for (const v of vectors) {
    if (v.length !== model.dimension) {
      throw new EmbeddingModelError(`model "${model.name}" stores ${model.dimension}-d vectors, got one of ${v.length}`);
    }
  }
}

export interface ModelCounts {
  name: string;
  dimension: number;
  runtime: string;
  source: string | null;
  /** DHR roles the model serves now (active_encoders). */
  roles: EncoderRole[];
  documents: number;
  staleDocuments: number;
  passages: number;
  /** Passages with stored sentence vectors of the model (answer highlights read them). */
  sentencePassages: number;
}

export function modelCounts(db: Queryable): Promise<ModelCounts[]> {
  // Counts grouped by model and joined to the models, not correlated subqueries per model: Citus
  // plans no correlated subquery over its shards beside a reference table (embedding_models).
  return db.query<ModelCounts>(
    `WITH documents_by AS (SELECT model_id, count(*)::int AS n FROM document_embeddings GROUP BY model_id),
          stale_by AS (SELECT e.model_id, count(*)::int AS n FROM document_embeddings e JOIN documents d ON d.id = e.document_id
                       WHERE e.content_hash <> d.content_hash GROUP BY e.model_id),
          passages_by AS (SELECT model_id, count(*)::int AS n FROM passage_embeddings GROUP BY model_id),
          sentences_by AS (SELECT model_id, count(*)::int AS n FROM sentence_embeddings GROUP BY model_id)
     SELECT m.name, m.dimension, m.runtime, m.source,
            coalesce((SELECT array_agg(a.role ORDER BY array_position(ARRAY['questionDocument', 'document', 'questionPassage', 'passage'], a.role))
                      FROM active_encoders a WHERE a.model_id = m.id), '{}') AS roles,
            coalesce(dm.n, 0) AS documents, coalesce(st.n, 0) AS "staleDocuments", coalesce(pm.n, 0) AS passages,
            coalesce(sm.n, 0) AS "sentencePassages"
     FROM embedding_models m
     LEFT JOIN documents_by dm ON dm.model_id = m.id
     LEFT JOIN stale_by st ON st.model_id = m.id
     LEFT JOIN passages_by pm ON pm.model_id = m.id
     LEFT JOIN sentences_by sm ON sm.model_id = m.id
     ORDER BY m.id`,
  );
}
