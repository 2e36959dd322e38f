import { fieldsOf, PASSAGE_ROW, selectList, type PassageRow } from './rows';
import type { Queryable } from './db';

/** A passage as context assembly reads it: the passage row less its word count. */
export type ContextPassage = Omit<PassageRow, 'wordCount'>;

const COLUMNS = selectList(
  PASSAGE_ROW,
  'p',
  fieldsOf(PASSAGE_ROW).filter((f) => f !== 'wordCount'),
);

/**
 * Every passage of the sections that hold the given passages (for a passage before the first
 * heading: its document's other such passages). First the hits' sections, by primary key; then
 * their passages by the section index, and the text before the headings by the document's.
 * Every statement is keyed by document id too, so on Citus each runs on the shards that hold those
 * documents only. Each is a bitmap scan of well under a millisecond on the demo store (EXPLAIN
 * ANALYZE, 20 hits); bench:demo-store with BENCH_CONTEXT times the whole step.
 */
export async function passagesOfSectionsHolding(db: Queryable, hits: readonly { passageId: number; documentId: number }[]): Promise<ContextPassage[]> {
  const documents = [...new Set(hits.map((h) => h.documentId))];
  const held = await db.query<{ documentId: number; sectionId: number | null }>(
    `SELECT document_id AS "documentId", section_id AS "sectionId" FROM passages WHERE id = ANY($1::int[]) AND document_id = ANY($2::int[])`,
    [hits.map((h) => h.passageId), documents],
  );
  const sections = [...new Set(held.flatMap((h) => (h.sectionId === null ? [] : [h.sectionId])))];
  const beforeHeadings = [...new Set(held.flatMap((h) => (h.sectionId === null ? [h.documentId] : [])))];
  const [inSections, before] = await Promise.all([
    sections.length === 0
      ? []
      : db.query<ContextPassage>(`SELECT ${COLUMNS} FROM passages p WHERE p.section_id = ANY($1::int[]) AND p.document_id = ANY($2::int[])`, [
          sections,
          documents,
        ]),
    beforeHeadings.length === 0
      ? []
      : db.query<ContextPassage>(`SELECT ${COLUMNS} FROM passages p WHERE p.section_id IS NULL AND p.document_id = ANY($1::int[])`, [beforeHeadings]),
  ]);
  return [...inSections, ...before];
}
