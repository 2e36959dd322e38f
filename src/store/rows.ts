/** Row shapes read by the API (Prisma's field names), and the SQL column list for raw passage reads. */

export interface DocumentRow {
  id: number;
  key: string;
  title: string;
  abstract: string;
  summary: string;
  source: string | null;
  metadata: Record<string, unknown>;
  contentHash: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface SectionRow {
  id: number;
  documentId: number;
  parentId: number | null;
  title: string;
  depth: number;
  ordinal: number;
  position: number;
  titlePath: string[];
}

export interface PassageRow {
  id: number;
  documentId: number;
  sectionId: number | null;
  ordinal: number;
  text: string;
  titlePath: string[];
  wordCount: number;
}

export interface LinkRow {
  id: number;
  passageId: number;
  documentId: number;
  target: string;
  targetDocumentId: number | null;
  anchorText: string;
}

export const PASSAGE_COLUMNS = `p.id, p.document_id AS "documentId", p.section_id AS "sectionId", p.ordinal, p.text,
  p.title_path AS "titlePath", p.word_count AS "wordCount"`;
