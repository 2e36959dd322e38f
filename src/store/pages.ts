import type { Queryable } from './db';
import { escapeLike, type DocumentListFilter } from './reads';
import { DOCUMENT_COLUMNS, PASSAGE_COLUMNS, type DocumentRow, type PassageRow } from './rows';

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

// Passage ordinals are int4; bigint sentinels make "unbounded" exact and keep the bounds index conditions.
const LOW = -1;
const HIGH = 2_147_483_648;

/** The window's rows in key order (sorted here: UNION ALL promises no order), and the probe's answer. */
function split<R>(rows: (R & { beyond: boolean })[], keyOf: (row: R) => number): Page<R> {
  const window = rows.filter((r) => !r.beyond).map(({ beyond: _, ...row }) => row as unknown as R);
  return { rows: window.sort((a, b) => keyOf(a) - keyOf(b)), beyond: rows.some((r) => r.beyond) };
}

/** A page of documents in id order, filtered by title substring (case-insensitive) and source. */
export async function documentPage(db: Queryable, filter: DocumentListFilter, page: PageQuery): Promise<Page<DocumentRow>> {
  const params: unknown[] = [page.limit];
  const where: string[] = [];
  if (filter.titleContains !== undefined) where.push(`d.title ILIKE $${params.push(`%${escapeLike(filter.titleContains)}%`)}`);
  if (filter.source !== undefined) where.push(`d.source = $${params.push(filter.source)}`);
  // A bound only where a cursor gives one: on Citus, documents.id is the distribution column, and
  // shard pruning casts a compared constant to its type (int4), so an out-of-range sentinel fails.
  const after = page.after === undefined ? undefined : `$${params.push(page.after)}::int`;
  const before = page.before === undefined ? undefined : `$${params.push(page.before)}::int`;
  const conditions = (...more: (string | false)[]) => {
    const all = [...more.filter((c): c is string => c !== false), ...where];
    return all.length > 0 ? ` WHERE ${all.join(' AND ')}` : '';
  };
  const order = page.backward ? 'DESC' : 'ASC';
  let sql = `(SELECT ${DOCUMENT_COLUMNS}, false AS beyond FROM documents d${conditions(after !== undefined && `d.id > ${after}`, before !== undefined && `d.id < ${before}`)}
     ORDER BY d.id ${order} LIMIT $1)`;
  // The probe looks past the cursor on the other side; without that cursor there is nothing past it.
  if (page.probe && page.backward && before !== undefined) {
    sql += ` UNION ALL (SELECT ${DOCUMENT_COLUMNS}, true FROM documents d${conditions(`d.id >= ${before}`)} ORDER BY d.id LIMIT 1)`;
  } else if (page.probe && !page.backward && after !== undefined) {
    sql += ` UNION ALL (SELECT ${DOCUMENT_COLUMNS}, true FROM documents d${conditions(`d.id <= ${after}`)} ORDER BY d.id DESC LIMIT 1)`;
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
export async function passagePages(db: Queryable, windows: readonly PassageWindow[], page: Omit<PageQuery, 'after' | 'before'>): Promise<Page<PassageRow>[]> {
  // Citus plans no LIMIT in a lateral subquery over a table function: there, a statement per
  // document, each routed to its one shard.
  if ((db as { distributed?: string }).distributed === 'citus') return Promise.all(windows.map((w) => passageWindow(db, w, page)));
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

/** One document's page of passages: a statement routed to the document's shard (Citus). */
async function passageWindow(db: Queryable, window: PassageWindow, page: Omit<PageQuery, 'after' | 'before'>): Promise<Page<PassageRow>> {
  const order = page.backward ? 'DESC' : 'ASC';
  const probe = page.backward
    ? `UNION ALL (SELECT p.*, true AS beyond FROM passages p WHERE p.document_id = $1 AND p.ordinal >= $3 ORDER BY p.ordinal LIMIT 1)`
    : `UNION ALL (SELECT p.*, true AS beyond FROM passages p WHERE p.document_id = $1 AND p.ordinal <= $2 ORDER BY p.ordinal DESC LIMIT 1)`;
  const rows = await db.query<PassageRow & { beyond: boolean }>(
    `SELECT ${PASSAGE_COLUMNS}, p.beyond FROM (
       (SELECT p.*, false AS beyond FROM passages p
        WHERE p.document_id = $1 AND p.ordinal > $2::bigint AND p.ordinal < $3::bigint ORDER BY p.ordinal ${order} LIMIT $4)
       ${page.probe ? probe : ''}
     ) p`,
    [window.documentId, window.after ?? LOW, window.before ?? HIGH, page.limit],
  );
  return split(rows, (r) => r.ordinal);
}
