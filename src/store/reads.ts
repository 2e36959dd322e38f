import type { Queryable } from './db';
import {
  DOCUMENT_COLUMNS,
  LINK_COLUMNS,
  PASSAGE_COLUMNS,
  SECTION_COLUMNS,
  type DocumentRow,
  type LinkRow,
  type PassageRow,
  type SectionRow,
} from './rows';

/**
 * Batched reads: each takes many keys and answers in one statement, so the API's loaders
 * turn a nested query into a bounded number of round trips.
 */

export function documentsByIds(db: Queryable, ids: readonly number[]): Promise<DocumentRow[]> {
  return db.query<DocumentRow>(`SELECT ${DOCUMENT_COLUMNS} FROM documents d WHERE d.id = ANY($1::int[])`, [ids]);
}

export function documentsByKeys(db: Queryable, keys: readonly string[]): Promise<DocumentRow[]> {
  return db.query<DocumentRow>(`SELECT ${DOCUMENT_COLUMNS} FROM documents d WHERE d.key = ANY($1::text[])`, [keys]);
}

export interface DocumentListFilter {
  titleContains?: string;
  source?: string;
}

/** A page of documents in id order after `afterId`; asks for one extra row to know if more follow. */
export async function listDocuments(
  db: Queryable,
  filter: DocumentListFilter,
  first: number,
  afterId: number,
): Promise<{ rows: DocumentRow[]; hasNextPage: boolean }> {
  const { where, params } = documentFilter(filter, [afterId, first + 1]);
  const rows = await db.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM documents d WHERE d.id > $1 ${where} ORDER BY d.id LIMIT $2`,
    params,
  );
  return { rows: rows.slice(0, first), hasNextPage: rows.length > first };
}

export async function countDocuments(db: Queryable, filter: DocumentListFilter): Promise<number> {
  const { where, params } = documentFilter(filter, []);
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM documents d WHERE true ${where}`, params);
  return row.n;
}

function documentFilter(filter: DocumentListFilter, params: unknown[]): { where: string; params: unknown[] } {
  const clauses: string[] = [];
  const all = [...params];
  if (filter.titleContains !== undefined) {
    all.push(`%${escapeLike(filter.titleContains)}%`);
    clauses.push(`AND d.title ILIKE $${all.length}`);
  }
  if (filter.source !== undefined) {
    all.push(filter.source);
    clauses.push(`AND d.source = $${all.length}`);
  }
  return { where: clauses.join(' '), params: all };
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function sectionsByIds(db: Queryable, ids: readonly number[]): Promise<SectionRow[]> {
  return db.query<SectionRow>(`SELECT ${SECTION_COLUMNS} FROM sections s WHERE s.id = ANY($1::int[])`, [ids]);
}

/** All sections of the documents in pre-order (the table of contents). */
export function sectionsByDocumentIds(db: Queryable, ids: readonly number[]): Promise<SectionRow[]> {
  return db.query<SectionRow>(
    `SELECT ${SECTION_COLUMNS} FROM sections s WHERE s.document_id = ANY($1::int[]) ORDER BY s.document_id, s.position`,
    [ids],
  );
}

export function childrenBySectionIds(db: Queryable, ids: readonly number[]): Promise<SectionRow[]> {
  return db.query<SectionRow>(
    `SELECT ${SECTION_COLUMNS} FROM sections s WHERE s.parent_id = ANY($1::int[]) ORDER BY s.parent_id, s.ordinal`,
    [ids],
  );
}

export function passagesByIds(db: Queryable, ids: readonly number[]): Promise<PassageRow[]> {
  return db.query<PassageRow>(`SELECT ${PASSAGE_COLUMNS} FROM passages p WHERE p.id = ANY($1::int[])`, [ids]);
}

export function passagesBySectionIds(db: Queryable, ids: readonly number[]): Promise<PassageRow[]> {
  return db.query<PassageRow>(
    `SELECT ${PASSAGE_COLUMNS} FROM passages p WHERE p.section_id = ANY($1::int[]) ORDER BY p.section_id, p.ordinal`,
    [ids],
  );
}

/** Passages at (document, ordinal) positions: previous/next navigation. */
export function passagesAt(
  db: Queryable,
  positions: readonly { documentId: number; ordinal: number }[],
): Promise<PassageRow[]> {
  return db.query<PassageRow>(
    `SELECT ${PASSAGE_COLUMNS} FROM unnest($1::int[], $2::int[]) AS k(document_id, ordinal)
     JOIN passages p ON p.document_id = k.document_id AND p.ordinal = k.ordinal`,
    [positions.map((k) => k.documentId), positions.map((k) => k.ordinal)],
  );
}

/** For each document, up to `first` + 1 passages after `afterOrdinal` in reading order. */
export function passagePages(
  db: Queryable,
  pages: readonly { documentId: number; afterOrdinal: number }[],
  first: number,
): Promise<(PassageRow & { pageAfter: number })[]> {
  return db.query(
    `SELECT ${PASSAGE_COLUMNS}, k.after_ordinal AS "pageAfter"
     FROM unnest($1::int[], $2::int[]) AS k(document_id, after_ordinal)
     CROSS JOIN LATERAL (
       SELECT * FROM passages p WHERE p.document_id = k.document_id AND p.ordinal > k.after_ordinal
       ORDER BY p.ordinal LIMIT $3
     ) p`,
    [pages.map((k) => k.documentId), pages.map((k) => k.afterOrdinal), first + 1],
  );
}

export function passageCountsByDocumentIds(
  db: Queryable,
  ids: readonly number[],
): Promise<{ documentId: number; n: number }[]> {
  return db.query(
    `SELECT k.id AS "documentId", (SELECT count(*)::int FROM passages p WHERE p.document_id = k.id) AS n
     FROM unnest($1::int[]) AS k(id)`,
    [ids],
  );
}

export function outgoingLinksByDocumentIds(db: Queryable, ids: readonly number[]): Promise<LinkRow[]> {
  return db.query<LinkRow>(
    `SELECT ${LINK_COLUMNS} FROM links l WHERE l.document_id = ANY($1::int[]) ORDER BY l.document_id, l.id`,
    [ids],
  );
}

export function incomingLinksByDocumentIds(db: Queryable, ids: readonly number[]): Promise<LinkRow[]> {
  return db.query<LinkRow>(
    `SELECT ${LINK_COLUMNS} FROM links l WHERE l.target_document_id = ANY($1::int[])
     ORDER BY l.target_document_id, l.id`,
    [ids],
  );
}

export interface StoreStats {
  documents: number;
  sections: number;
  passages: number;
  links: number;
  resolvedLinks: number;
}

export async function storeStats(db: Queryable): Promise<StoreStats> {
  const [row] = await db.query<StoreStats>(
    `SELECT (SELECT count(*)::int FROM documents) AS documents,
            (SELECT count(*)::int FROM sections) AS sections,
            (SELECT count(*)::int FROM passages) AS passages,
            (SELECT count(*)::int FROM links) AS links,
            (SELECT count(*)::int FROM links WHERE target_document_id IS NOT NULL) AS "resolvedLinks"`,
  );
  return row;
}
