/** Row shapes read by the API, with the SQL column lists that produce them (camelCase aliases). */

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

export const DOCUMENT_COLUMNS = `d.id, d.key, d.title, d.abstract, d.summary, d.source, d.metadata,
  d.content_hash AS "contentHash", d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;

export const SECTION_COLUMNS = `s.id, s.document_id AS "documentId", s.parent_id AS "parentId", s.title, s.depth,
  s.ordinal, s.position, s.title_path AS "titlePath"`;

export const PASSAGE_COLUMNS = `p.id, p.document_id AS "documentId", p.section_id AS "sectionId", p.ordinal, p.text,
  p.title_path AS "titlePath", p.word_count AS "wordCount"`;

export const LINK_COLUMNS = `l.id, l.passage_id AS "passageId", l.document_id AS "documentId", l.target,
  l.target_document_id AS "targetDocumentId", l.anchor_text AS "anchorText"`;
