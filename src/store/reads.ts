import type { Document, Prisma } from '../generated/prisma/client';
import type { Database, Queryable } from './db';
import { PASSAGE_COLUMNS, type DocumentRow, type LinkRow, type PassageRow, type SectionRow } from './rows';

/**
 * Batched reads: each takes many keys and answers in one statement, so the API's loaders turn a
 * nested query into a bounded number of round trips. Plain lookups go through the typed Prisma
 * client; what Prisma cannot express in one statement (per-document pages, positional joins) is SQL.
 */

const asDocument = (row: Document): DocumentRow => ({
  ...row,
  metadata: row.metadata as Record<string, unknown>,
});

export async function documentsByIds(db: Database, ids: readonly number[]): Promise<DocumentRow[]> {
  return (await db.prisma.document.findMany({ where: { id: { in: [...ids] } } })).map(asDocument);
}

export async function documentsByKeys(db: Database, keys: readonly string[]): Promise<DocumentRow[]> {
  return (await db.prisma.document.findMany({ where: { key: { in: [...keys] } } })).map(asDocument);
}

export interface DocumentListFilter {
  titleContains?: string;
  source?: string;
}

// Prisma passes `contains` into ILIKE without escaping its wildcards; a title search is literal.
export const escapeLike = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function documentWhere(filter: DocumentListFilter): Prisma.DocumentWhereInput {
  return {
    ...(filter.titleContains !== undefined ? { title: { contains: escapeLike(filter.titleContains), mode: 'insensitive' } } : {}),
    ...(filter.source !== undefined ? { source: filter.source } : {}),
  };
}

export function countDocuments(db: Database, filter: DocumentListFilter): Promise<number> {
  return db.prisma.document.count({ where: documentWhere(filter) });
}

export function sectionsByIds(db: Database, ids: readonly number[]): Promise<SectionRow[]> {
  return db.prisma.section.findMany({ where: { id: { in: [...ids] } } });
}

/** All sections of the documents in pre-order (the table of contents). */
export function sectionsByDocumentIds(db: Database, ids: readonly number[]): Promise<SectionRow[]> {
  return db.prisma.section.findMany({
    where: { documentId: { in: [...ids] } },
    orderBy: [{ documentId: 'asc' }, { position: 'asc' }],
  });
}

export function childrenBySectionIds(db: Database, ids: readonly number[]): Promise<SectionRow[]> {
  return db.prisma.section.findMany({
    where: { parentId: { in: [...ids] } },
    orderBy: [{ parentId: 'asc' }, { ordinal: 'asc' }],
  });
}

export function passagesByIds(db: Database, ids: readonly number[]): Promise<PassageRow[]> {
  return db.prisma.passage.findMany({ where: { id: { in: [...ids] } } });
}

export function passagesBySectionIds(db: Database, ids: readonly number[]): Promise<PassageRow[]> {
  return db.prisma.passage.findMany({
    where: { sectionId: { in: [...ids] } },
    orderBy: [{ sectionId: 'asc' }, { ordinal: 'asc' }],
  });
}

/** Passages at (document, ordinal) positions: previous/next navigation. */
export function passagesAt(db: Queryable, positions: readonly { documentId: number; ordinal: number }[]): Promise<PassageRow[]> {
  return db.query<PassageRow>(
    `SELECT ${PASSAGE_COLUMNS} FROM unnest($1::int[], $2::int[]) AS k(document_id, ordinal)
     JOIN passages p ON p.document_id = k.document_id AND p.ordinal = k.ordinal`,
    [positions.map((k) => k.documentId), positions.map((k) => k.ordinal)],
  );
}

export async function passageCountsByDocumentIds(db: Database, ids: readonly number[]): Promise<{ documentId: number; n: number }[]> {
  const groups = await db.prisma.passage.groupBy({
    by: ['documentId'],
    where: { documentId: { in: [...ids] } },
    _count: { _all: true },
  });
  return groups.map((g) => ({ documentId: g.documentId, n: g._count._all }));
}

export function outgoingLinksByDocumentIds(db: Database, ids: readonly number[]): Promise<LinkRow[]> {
  return db.prisma.link.findMany({
    where: { documentId: { in: [...ids] } },
    orderBy: [{ documentId: 'asc' }, { id: 'asc' }],
  });
}

export function incomingLinksByDocumentIds(db: Database, ids: readonly number[]): Promise<LinkRow[]> {
  return db.prisma.link.findMany({
    where: { targetDocumentId: { in: [...ids] } },
    orderBy: [{ targetDocumentId: 'asc' }, { id: 'asc' }],
  });
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
