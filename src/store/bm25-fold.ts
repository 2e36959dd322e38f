import type { Queryable } from './db';

/**
 * Folds the BM25 statistics rows that concurrent writers left in other slots back into slot 0
 * (migration 0013: `bm25_fold_stats()`), so readers sum few rows. Never waits: slots whose
 * writers are still open, or slot 0 held by a writer (which then folds when it is done), are
 * left for a later call. Returns the number of slots folded; 0 on Citus, whose statistics are
 * per shard group and never use a slot.
 */
export async function foldBm25Stats(db: Queryable): Promise<number> {
  const [{ folded }] = await db.query<{ folded: number }>('SELECT bm25_fold_stats() AS folded');
  return folded;
}
