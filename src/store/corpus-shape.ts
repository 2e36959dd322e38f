import type { Database } from './db';

/**
 * The corpus's mean passages a document (BM25's statistics: one row each level), for choices a
 * statement builder makes before it runs (HYBRID_HIERARCHICAL's stage 2: whether scoring
 * candidates can apply at all). Kept per open store for SHAPE_TTL_MS: a corpus changes shape
 * slowly, and a stale value only leaves in, or out, a branch the statement still decides exactly.
 */
const SHAPE_TTL_MS = 30_000;
const known = new WeakMap<object, { at: number; mean: Promise<number> }>();

export function meanPassagesPerDocument(db: Database): Promise<number> {
  // Keyed as bm25-index.ts keys its lookup: the per-request wrappers share the store's counter.
  const key = db.statements;
  const hit = known.get(key);
  if (hit && Date.now() - hit.at < SHAPE_TTL_MS) return hit.mean;
  const mean = db
    .query<{ mean: number }>(
      `SELECT coalesce(sum(items) FILTER (WHERE level = 'p')::float8 / greatest(sum(items) FILTER (WHERE level = 'd'), 1), 0) AS mean FROM bm25_stats`,
    )
    .then(([row]) => Number(row.mean));
  void mean.catch(() => known.delete(key));
  known.set(key, { at: Date.now(), mean });
  return mean;
}
