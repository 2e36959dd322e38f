import type { Queryable } from './db';

/**
 * Fills the full-text vector (title path + text, English stemming) of passages that lack one,
 * optionally only those of some documents; returns how many it indexed. A document's new
 * passages are unindexed rows, so re-ingest needs nothing else.
 */
export async function indexLexical(db: Queryable, documentIds?: number[]): Promise<number> {
  if (documentIds && documentIds.length === 0) return 0;
  const [{ n }] = await db.query<{ n: number }>(
    `WITH indexed AS (
       UPDATE passages SET search = to_tsvector('english'::regconfig, passage_search_text(title_path, text))
       WHERE search IS NULL AND ($1::int[] IS NULL OR document_id = ANY($1::int[]))
       RETURNING 1)
     SELECT count(*)::int AS n FROM indexed`,
    [documentIds ?? null],
  );
  return n;
}
