/** Row shapes read by the API (Prisma's field names), and the SQL column list for raw passage reads. */
import type { Document, Link, Passage, Section } from '../generated/prisma/client';

/**
 * The rows' TypeScript shapes are Prisma's generated models (prisma/schema.prisma, kept in step
 * with migrations/ by test/prisma-schema.test.ts): a column added there reaches every reader.
 */
export type PassageRow = Passage;
export type SectionRow = Section;
export type LinkRow = Link;
/** metadata is always a JSON object (ingest checks it; the API serves it as one); Prisma types Json as any JSON value. */
export type DocumentRow = Omit<Document, 'metadata'> & { metadata: Record<string, unknown> };

export const PASSAGE_COLUMNS = `p.id, p.document_id AS "documentId", p.section_id AS "sectionId", p.ordinal, p.text,
  p.title_path AS "titlePath", p.word_count AS "wordCount"`;
