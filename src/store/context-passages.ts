import type { Queryable } from './db';

/** A passage as context assembly reads it. */
export interface ContextPassage {
  id: number;
  documentId: number;
  sectionId: number | null;
  ordinal: number;
  text: string;
  titlePath: string[];
}

/**
 * Every passage of the sections that hold the given passages (for a passage before the first
 * heading: its document's other such passages), in one statement. Keyed by document id too, so on
 * Citus it runs on the shards that hold those documents only, each part within one shard.
 */
export function passagesOfSectionsHolding(
  db: Queryable,
  hits: readonly { passageId: number; documentId: number }[],
): Promise<ContextPassage[]> {
  return db.query<ContextPassage>(
    `SELECT p.id, p.document_id AS "documentId", p.section_id AS "sectionId", p.ordinal, p.text, p.title_path AS "titlePath"
     FROM passages p
     WHERE p.document_id = ANY($2::int[])
       AND EXISTS (SELECT 1 FROM passages h
                   WHERE h.document_id = p.document_id AND h.id = ANY($1::int[])
                     AND h.section_id IS NOT DISTINCT FROM p.section_id)
     ORDER BY p.document_id, p.ordinal`,
    [hits.map((h) => h.passageId), [...new Set(hits.map((h) => h.documentId))]],
  );
}
