import type { Queryable } from './db';

export interface LevelCounts {
  total: number;
  embedded: number;
  indexed: number;
  /** Passages only: how many have stored sentence vectors of the passage model (answer highlights read them). */
  sentenceVectors?: number;
}

/**
 * Documents and passages: how many exist, how many have a vector of the given models, how many
 * BM25 has counted (summed over statistics rows: slots on one server, migration 0013; shard groups
 * on Citus), and how many passages have sentence vectors of `sentences` (default: the passage
 * model). Counts rows (one index-only scan per level): asked for only when a client selects
 * coverage or warnings.
 */
export async function coverage(
  db: Queryable,
  models: { document?: number; passage?: number; sentences?: number },
): Promise<{ documents: LevelCounts; passages: LevelCounts }> {
  const [row] = await db.query<Record<string, number>>(
    `SELECT (SELECT count(*) FROM documents)::int AS documents, (SELECT count(*) FROM passages)::int AS passages,
            (SELECT coalesce(sum(items), 0) FROM bm25_stats WHERE level = 'd')::int AS documents_indexed,
            (SELECT coalesce(sum(items), 0) FROM bm25_stats WHERE level = 'p')::int AS passages_indexed,
            (SELECT count(*) FROM document_embeddings WHERE model_id = $1)::int AS documents_embedded,
            (SELECT count(*) FROM passage_embeddings WHERE model_id = $2)::int AS passages_embedded,
            (SELECT count(*) FROM sentence_embeddings WHERE model_id = $3)::int AS passages_sentences`,
    [models.document ?? 0, models.passage ?? 0, models.sentences ?? models.passage ?? 0],
  );
  return {
    documents: { total: row.documents, embedded: row.documents_embedded, indexed: row.documents_indexed },
    passages: { total: row.passages, embedded: row.passages_embedded, indexed: row.passages_indexed, sentenceVectors: row.passages_sentences },
  };
}
