import type { Queryable } from './db';

export interface ClozeSource {
  passageId: number;
  documentId: number;
  text: string;
  /** The other passages of its section (of its abstract, for an abstract passage): the neighbours that are the gold. */
  neighbourIds: number[];
}

/**
 * Passages for inverse-cloze pseudo-questions, drawn at random but reproducibly (ordered by a
 * hash of the id and the seed), each with the other passages of its group: only passages that
 * have neighbours, since the neighbours are the gold (the passage itself holds the sentence).
 */
export function clozeSources(db: Queryable, count: number, seed: number): Promise<ClozeSource[]> {
  // Drawn first (four times the count, cheap: no per-row lookup), then kept if they have neighbours.
  return db.query<ClozeSource>(
    `SELECT p.id AS "passageId", p.document_id AS "documentId", p.text, n.ids AS "neighbourIds"
       FROM (SELECT id, document_id, section_id, text, md5(id::text || ':' || $2::text) AS draw FROM passages
              WHERE word_count >= 12 ORDER BY draw, id LIMIT 4 * $1::int) p
       CROSS JOIN LATERAL (
         SELECT array_agg(o.id ORDER BY o.ordinal) AS ids FROM passages o
          WHERE o.document_id = p.document_id AND o.section_id IS NOT DISTINCT FROM p.section_id AND o.id <> p.id
       ) n
      WHERE n.ids IS NOT NULL
      ORDER BY p.draw, p.id
      LIMIT $1`,
    [count, seed],
  );
}
