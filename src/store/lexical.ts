import type { Database, Queryable } from './db';

/**
 * Fills the full-text vector (title path + text, English stemming) of passages that lack one,
 * optionally only those of some documents; returns how many it indexed. A document's new
 * passages are unindexed rows, so re-ingest needs nothing else.
 *
 * Rows another transaction holds are skipped, not waited for (FOR NO KEY UPDATE SKIP LOCKED, which
 * a vector write's foreign key check, KEY SHARE, does not block): a re-ingest deleting them (they
 * are going), or another index step filling them (it indexes them). Waiting deadlocked: this
 * update and a re-ingest's delete of the same document's passages lock its rows in different
 * orders (heap order here, section by section there). What a holder that rolls back leaves stays
 * recorded as pending and is indexed by the next finisher. Citus runs the plain update: it
 * refuses row locks over a distributed table's shards.
 */
export async function indexLexical(db: Queryable, documentIds?: number[], options: { citus?: boolean } = {}): Promise<number> {
  if (documentIds && documentIds.length === 0) return 0;
  const citus = options.citus ?? (db as Partial<Database>).distributed === 'citus';
  const unindexed = `search IS NULL AND ($1::int[] IS NULL OR document_id = ANY($1::int[]))`;
  const [{ n }] = await db.query<{ n: number }>(
    `WITH indexed AS (
       UPDATE passages SET search = to_tsvector('english'::regconfig, passage_search_text(title_path, text))
       WHERE ${citus ? unindexed : `id IN (SELECT id FROM passages WHERE ${unindexed} FOR NO KEY UPDATE SKIP LOCKED)`}
       RETURNING 1)
     SELECT count(*)::int AS n FROM indexed`,
    [documentIds ?? null],
  );
  return n;
}
