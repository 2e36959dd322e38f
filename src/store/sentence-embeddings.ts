import type { Database, Queryable } from './db';
import { EmbeddingModelError, writeSkippingVanished, type EmbeddingModelRow } from './embeddings';
import { firstOrdinals, float4Array, vectorLiteral, vectorsAt } from './vector';

/**
 * Sentence vectors (migration 0018): per passage and model, the vectors of its first sentences in
 * order and the hash of the split they came from. Written with the passages' vectors; read by
 * answer highlights, which take only their inner products with the question vector.
 */

export interface SentenceEmbeddingRow {
  passageId: number;
  documentId: number;
  splitHash: string;
  vectors: Float32Array[];
  /**
   * The sentences' typed spans (migration 0019), as the retrieval layer encodes them: a tagger
   * version and, per sentence, a flat list of numbers. Absent: none stored (tagged at query time).
   */
  spans?: StoredSpans;
  /** Counted in the write's result (a passage whose own vector was not written in the same batch). */
  counted?: boolean;
}

/** Typed spans of a row's sentences: `v` the tagger that made them, `s[i]` sentence i's (start, end, type) triples, flat. */
export interface StoredSpans {
  v: number;
  s: number[][];
}

/**
 * Writes (or replaces) the sentence vectors of passages in one statement; passages deleted since
 * they were read, or being deleted meanwhile, are skipped (writeSkippingVanished). Returns how many
 * rows marked `counted` were written.
 */
export async function writeSentenceEmbeddings(db: Queryable, model: EmbeddingModelRow, rows: readonly SentenceEmbeddingRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  for (const v of rows.flatMap((r) => r.vectors)) {
    if (v.length !== model.dimension) throw new EmbeddingModelError(`model "${model.name}" stores ${model.dimension}-d vectors, got one of ${v.length}`);
  }
  // Every row's vectors in one float4Array; none stays an empty array (a passage without sentences still has a row).
  const counts = rows.map((r) => r.vectors.length);
  // EXCLUDED.embedded_at: the proposed row's now() (Citus refuses now() itself in DO UPDATE).
  return writeSkippingVanished(
    db,
    `WITH w AS (
       INSERT INTO sentence_embeddings (model_id, document_id, passage_id, split_hash, embeddings, spans)
       SELECT $1, p.document_id, p.id, u.split_hash, coalesce(${vectorsAt('$5', model.dimension, 'u.first_vector', 'u.n')}, '{}'), u.spans::jsonb
       FROM unnest($2::int[], $3::int[], $4::text[], $8::int[], $9::int[], $7::text[]) AS u(passage_id, document_id, split_hash, first_vector, n, spans)
       JOIN passages p ON p.document_id = u.document_id AND p.id = u.passage_id
       ON CONFLICT (model_id, document_id, passage_id) DO UPDATE
         SET split_hash = EXCLUDED.split_hash, embeddings = EXCLUDED.embeddings, spans = EXCLUDED.spans, embedded_at = EXCLUDED.embedded_at
       RETURNING passage_id)
     SELECT count(*)::int AS n FROM w JOIN unnest($2::int[], $6::bool[]) AS c(passage_id, counted) USING (passage_id) WHERE c.counted`,
    [
      model.id,
      rows.map((r) => r.passageId),
      rows.map((r) => r.documentId),
      rows.map((r) => r.splitHash),
      float4Array(rows.flatMap((r) => r.vectors)),
      rows.map((r) => r.counted ?? true),
      // A rewrite without spans clears the old ones: they belonged to the sentences replaced.
      rows.map((r) => (r.spans ? JSON.stringify(r.spans) : null)),
      firstOrdinals(counts),
      counts,
    ],
  );
}

export interface SentenceSimilarities {
  /** The hash of the sentences the vectors came from (src/retrieval/sentence-vectors.ts). */
  splitHash: string;
  /** E_Q(question)·E_P(sentence i), for the stored sentences in order. */
  similarities: number[];
  /**
   * The stored typed spans of sentence i (flat start, end, type triples) where they were written by
   * tagger `spanTagger`; null when the row has none or another tagger's.
   */
  spans: number[][] | null;
}

/**
 * The inner products of the question with the stored sentence vectors of these passages, in one
 * statement: key lookups, and the products taken where the vectors are, so 8 bytes come back per
 * sentence instead of a vector. A row per sentence (a lateral unnest of the row's own array, which
 * Citus runs on the shard). Passages without sentence vectors of the model are left out.
 */
export async function sentenceSimilarities(
  db: Queryable & Pick<Partial<Database>, 'vectorParam'>,
  modelId: number,
  question: Float32Array,
  passages: readonly { passageId: number; documentId: number }[],
  spanTagger = 0,
): Promise<Map<number, SentenceSimilarities>> {
  if (passages.length === 0) return new Map();
  // Each sentence's own spans (a few numbers), only when the row's tagger is the reader's.
  const rows = await db.query<{ passageId: number; splitHash: string; similarity: number; spans: number[] | null }>(
    `SELECT s.passage_id AS "passageId", s.split_hash AS "splitHash", -(e.v <#> $2::vector) AS similarity,
            CASE WHEN (s.spans->>'v')::int = $5 THEN s.spans->'s'->(e.n::int - 1) END AS spans
     FROM sentence_embeddings s CROSS JOIN LATERAL unnest(s.embeddings) WITH ORDINALITY AS e(v, n)
     WHERE s.model_id = $1 AND s.document_id = ANY($3::int[]) AND s.passage_id = ANY($4::int[])
     ORDER BY s.passage_id, e.n`,
    [
      modelId,
      db.vectorParam?.(question) ?? vectorLiteral(question),
      [...new Set(passages.map((p) => p.documentId))],
      passages.map((p) => p.passageId),
      spanTagger,
    ],
  );
  const out = new Map<number, SentenceSimilarities>();
  for (const r of rows) {
    let entry = out.get(r.passageId);
    if (!entry) out.set(r.passageId, (entry = { splitHash: r.splitHash, similarities: [], spans: [] }));
    entry.similarities.push(Number(r.similarity));
    // pg returns jsonb parsed; a driver that hands back text is parsed here.
    const spans = typeof r.spans === 'string' ? (JSON.parse(r.spans) as number[]) : r.spans;
    if (spans && entry.spans) entry.spans.push(spans);
    else entry.spans = null;
  }
  return out;
}

/** The stored sentence vectors of passages, as written (tests and diagnostics; highlights read similarities). */
export async function storedSentenceVectors(
  db: Queryable,
  modelId: number,
  passageIds: readonly number[],
): Promise<Map<number, { splitHash: string; vectors: Float32Array[] }>> {
  const rows = await db.query<{ passageId: number; splitHash: string; n: number | null; v: string | null }>(
    `SELECT s.passage_id AS "passageId", s.split_hash AS "splitHash", e.n::int AS n, e.v::text AS v
     FROM sentence_embeddings s LEFT JOIN LATERAL unnest(s.embeddings) WITH ORDINALITY AS e(v, n) ON true
     WHERE s.model_id = $1 AND s.passage_id = ANY($2::int[]) ORDER BY s.passage_id, e.n`,
    [modelId, passageIds],
  );
  const out = new Map<number, { splitHash: string; vectors: Float32Array[] }>();
  for (const r of rows) {
    let entry = out.get(r.passageId);
    if (!entry) out.set(r.passageId, (entry = { splitHash: r.splitHash, vectors: [] }));
    // pgvector's text form is a JSON array.
    if (r.v !== null) entry.vectors.push(Float32Array.from(JSON.parse(r.v) as number[]));
  }
  return out;
}
