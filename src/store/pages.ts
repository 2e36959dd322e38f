import type { Queryable } from './db';
import { escapeLike, type DocumentListFilter } from './reads';
import { PASSAGE_COLUMNS, type DocumentRow, type PassageRow } from './rows';

/**
 * Keyset pages of the API's cursor connections, both ways, one statement per page: up to `limit`
 * rows strictly between `after` and `before` in key order (ascending from `after` when forward,
 * descending from `before` when backward), plus, with `probe`, at most one row from the far side
 * of the cursor the page starts at (at or before `after` forward, at or after `before` backward),
 * which says whether anything lies beyond it (Relay's optional hasPreviousPage/hasNextPage).
 */
export interface PageQuery {
  /** Exclusive bounds on the key (document id, passage ordinal); absent: unbounded. */
  after?: number;
  before?: number;
  limit: number;
  backward: boolean;
  probe: boolean;
}

export interface Page<R> {
  /** In key order (ascending), at most `limit`. */
  rows: R[];
  /** The probe found a row beyond the cursor. */
  beyond: boolean;
}

// Keys are int4; bigint sentinels make "unbounded" exact and keep the bounds index conditions.
const LOW = -1;
const HIGH = 2_147_483_648;

/** The window's rows in key order (sorted here: UNION ALL promises no order), and the probe's answer. */
function split<R>(rows: (R & { beyond: boolean })[], keyOf: (row: R) => number): Page<R> {
  const window = rows.filter((r) => !r.beyond).map(({ beyond: _, ...row }) => row as unknown as R);
  return { rows: window.sort((a, b) => keyOf(a) - keyOf(b)), beyond: rows.some((r) => r.beyond) };
}


const DOCUMENT_COLUMNS = `d.id, d.key, d.title, d.abstract, d.summary, d.source, d.metadata,
  d.content_hash AS "contentHash", d.created_at AS "createdAt", d.updated_at AS "updatedAt"`;

/** A page of documents in id order, filtered by title substring (case-insensitive) and source. */
export async function documentPage(db: Queryable, filter: DocumentListFilter, page: PageQuery): Promise<Page<DocumentRow>> {
  const params: unknown[] = [page.after ?? LOW, page.before ?? HIGH, page.limit];
  const where: string[] = [];
  if (filter.titleContains !== undefined) where.push(`d.title ILIKE $${params.push(`%${escapeLike(filter.titleContains)}%`)}`);
  if (filter.source !== undefined) where.push(`d.source = $${params.push(filter.source)}`);
  const and = where.map((w) => ` AND ${w}`).join('');
  const order = page.backward ? 'DESC' : 'ASC';
  let sql = `(SELECT ${DOCUMENT_COLUMNS}, false AS beyond FROM documents d
     WHERE d.id > $1::bigint AND d.id < $2::bigint${and} ORDER BY d.id ${order} LIMIT $3)`;
  if (page.probe) {
    sql += page.backward
      ? ` UNION ALL (SELECT ${DOCUMENT_COLUMNS}, true FROM documents d WHERE d.id >= $2::bigint${and} ORDER BY d.id LIMIT 1)`
      : ` UNION ALL (SELECT ${DOCUMENT_COLUMNS}, true FROM documents d WHERE d.id <= $1::bigint${and} ORDER BY d.id DESC LIMIT 1)`;
  }
  return split(await db.query<DocumentRow & { beyond: boolean }>(sql, params), (r) => r.id);
}

export interface PassageWindow {
  documentId: number;
  after?: number;
  before?: number;
}

/**
 * Pages of passages (reading order) of many documents with the same limit, direction and probe:
 * one statement for all of them (a document's passages field in a list of documents). Pages come
 * back in the order of `windows`.
 */
export async function passagePages(
  db: Queryable,
  windows: readonly PassageWindow[],
  page: Omit<PageQuery, 'after' | 'before'>,
): Promise<Page<PassageRow>[]> {
  const order = page.backward ? 'DESC' : 'ASC';
  const probe = page.backward
    ? `UNION ALL (SELECT p.*, true AS beyond FROM passages p
         WHERE p.document_id = k.document_id AND p.ordinal >= k.hi ORDER BY p.ordinal LIMIT 1)`
    : `UNION ALL (SELECT p.*, true AS beyond FROM passages p
         WHERE p.document_id = k.document_id AND p.ordinal <= k.lo ORDER BY p.ordinal DESC LIMIT 1)`;
  const rows = await db.query<PassageRow & { beyond: boolean; slot: number }>(
    `SELECT ${PASSAGE_COLUMNS}, p.beyond, k.slot::int AS slot
     FROM unnest($1::int[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS k(document_id, lo, hi, slot)
     CROSS JOIN LATERAL (
       (SELECT p.*, false AS beyond FROM passages p
        WHERE p.document_id = k.document_id AND p.ordinal > k.lo AND p.ordinal < k.hi
        ORDER BY p.ordinal ${order} LIMIT $4)
       ${page.probe ? probe : ''}
     ) p`,
    [windows.map((w) => w.documentId), windows.map((w) => w.after ?? LOW), windows.map((w) => w.before ?? HIGH), page.limit],
  );
  const bySlot = windows.map(() => [] as (PassageRow & { beyond: boolean })[]);
  for (const { slot, ...row } of rows) bySlot[slot - 1].push(row);
  return bySlot.map((slotRows) => split(slotRows, (r) => r.ordinal));
}
