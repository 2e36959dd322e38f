import type { Queryable } from './db';

/**
 * The SQL of the training-pair miner (src/training): candidate pairs a page at a time, in key
 * order after a cursor (keyset pagination), so a miner over a corpus of any size holds one page.
 *
 * Link pairs follow HLP (Section 3.2, Appendix E) over the resolved link graph: a passage "mentions"
 * a document when one of its links resolved to it (`links.target_document_id`), self-links ignored.
 */

/** Two int4 ids; pages continue strictly after one. */
export type PairCursor = readonly [number, number];
export const PAIR_START: PairCursor = [0, 0];

export interface LinkPairRow {
  questionPassageId: number;
  positivePassageId: number;
  /** Every positive of this question passage under the same topology (never its negatives). */
  positives: number[];
}

/** A link that counts: resolved, to another document. */
const MENTION = (l: string) => `${l}.target_document_id IS NOT NULL AND ${l}.target_document_id <> ${l}.document_id`;

/** A condition on the pair's question and positive passage id columns. */
type PairWhere = (q: string, p: string) => string;

/** Dual-link: q (in Q) links to P and p (in P) links to Q. */
const dualLinkPairs = (where: PairWhere) => `SELECT DISTINCT la.passage_id AS q, lb.passage_id AS p
  FROM links la JOIN links lb ON lb.document_id = la.target_document_id AND lb.target_document_id = la.document_id
  WHERE ${MENTION('la')} AND ${where('la.passage_id', 'lb.passage_id')}`;

/**
 * Co-mention: q (in Q) and p (in P ≠ Q) both link to a third document E (not Q, not P) that is not
 * a hub (in-degree below $hub when $hub is set), and p links to Q. Pairs that are dual-link (q
 * also links to P) are left to that kind, so a pair is mined once. The hub test counts E's linking
 * documents only up to the threshold (index links_target_source_idx), so a hub costs no more than
 * any other document.
 */
const coMentionPairs = (hub: string, where: PairWhere) => `SELECT DISTINCT lq.passage_id AS q, lp.passage_id AS p
  FROM links lq JOIN links lp ON lp.target_document_id = lq.target_document_id
  WHERE ${MENTION('lq')} AND lp.document_id <> lq.document_id AND lp.document_id <> lq.target_document_id
    AND (${hub}::int IS NULL OR (SELECT count(*) FROM (SELECT DISTINCT h.document_id FROM links h
         WHERE h.target_document_id = lq.target_document_id AND h.document_id <> lq.target_document_id LIMIT ${hub}::int) c) < ${hub}::int)
    AND EXISTS (SELECT 1 FROM links back WHERE back.passage_id = lp.passage_id AND back.target_document_id = lq.document_id)
    AND NOT EXISTS (SELECT 1 FROM links fwd WHERE fwd.passage_id = lq.passage_id AND fwd.target_document_id = lp.document_id)
    AND ${where('lq.passage_id', 'lp.passage_id')}`;

const INT4_MAX = 2_147_483_647;

/** A page of link pairs and where the next one starts (null: none left). */
export interface LinkPairPage {
  rows: LinkPairRow[];
  next: PairCursor | null;
}

/**
 * One page: the next `limit` question passages that have a resolved link (an index range scan),
 * then at most `limit` of their pairs after the cursor. Pairs are only ever computed for one
 * batch of question passages, so a page costs the same at the start of the corpus and at its end.
 */
async function linkPage(db: Queryable, pairs: (where: PairWhere) => string, params: unknown[], after: PairCursor, limit: number): Promise<LinkPairPage> {
  // A cursor at (q, INT4_MAX) has finished q.
  const from = after[1] === INT4_MAX ? after[0] + 1 : after[0];
  const batch = (
    await db.query<{ id: number }>(`SELECT DISTINCT passage_id AS id FROM links WHERE passage_id >= $1 AND ${MENTION('links')} ORDER BY passage_id LIMIT $2`, [
      from,
      limit,
    ])
  ).map((r) => r.id);
  if (batch.length === 0) return { rows: [], next: null };
  const n = params.length;
  const rows = await db.query<{ q: number; p: number; positives: number[] }>(
    `SELECT x.q, x.p, array(SELECT y.p FROM (${pairs((q) => `${q} = x.q`)}) y ORDER BY y.p) AS positives
     FROM (${pairs((q, p) => `${q} = ANY($${n + 1}::int[]) AND (${q}, ${p}) > ($${n + 2}::int, $${n + 3}::int)`)} ORDER BY 1, 2 LIMIT $${n + 4}::int) x
     ORDER BY x.q, x.p`,
    [...params, batch, after[0], after[1], limit],
  );
  const last = rows[rows.length - 1];
  // A full page may have more pairs of its last question passage; a short one finished the batch.
  const next: PairCursor = rows.length === limit ? [last.q, last.p] : [batch[batch.length - 1], INT4_MAX];
  return { rows: rows.map((r) => ({ questionPassageId: r.q, positivePassageId: r.p, positives: r.positives })), next };
}

export function dualLinkPage(db: Queryable, after: PairCursor, limit: number): Promise<LinkPairPage> {
  return linkPage(db, dualLinkPairs, [], after, limit);
}

export function coMentionPage(db: Queryable, hubThreshold: number | null, after: PairCursor, limit: number): Promise<LinkPairPage> {
  return linkPage(db, (where) => coMentionPairs('$1', where), [hubThreshold], after, limit);
}

/**
 * HLP drops co-mentions of the top `fraction` of entities by in-degree. Ranked among documents that
 * are link targets (in-degree = distinct linking documents), h = ⌊fraction · targets⌋: a hub has an
 * in-degree above the (h+1)-th largest, so at most h documents are hubs and documents tied at the
 * cut are not (in an evenly linked store none is). Returns the in-degree from which a document is a
 * hub, or null when none is (h = 0: fewer than 1/fraction targets).
 */
export async function hubThreshold(db: Queryable, fraction: number): Promise<number | null> {
  const [row] = await db.query<{ threshold: number | null }>(
    `WITH deg AS (SELECT target_document_id, count(DISTINCT document_id)::int AS d FROM links WHERE ${MENTION('links')} GROUP BY 1),
          n AS (SELECT floor($1::float8 * count(*))::int AS hubs FROM deg)
     SELECT CASE WHEN n.hubs < 1 THEN NULL
                 ELSE coalesce((SELECT d FROM deg ORDER BY d DESC OFFSET n.hubs LIMIT 1), 0) + 1 END AS threshold FROM n`,
    [fraction],
  );
  return row.threshold;
}

/** A title-tree group (a section, or a document's abstract) and its passages in reading order. */
export interface GroupRow {
  groupId: number;
  documentId: number;
  /** The section's title path, or [document title] for an abstract. */
  titlePath: string[];
  passageIds: number[];
}

/** Sections that hold passages, in id order after `after`. */
export async function sectionPage(db: Queryable, after: number, limit: number): Promise<GroupRow[]> {
  return db.query<GroupRow>(
    `SELECT s.id AS "groupId", s.document_id AS "documentId", s.title_path AS "titlePath", x.ids AS "passageIds"
     FROM sections s CROSS JOIN LATERAL (SELECT array_agg(p.id ORDER BY p.ordinal) AS ids FROM passages p WHERE p.section_id = s.id) x
     WHERE s.id > $1 AND x.ids IS NOT NULL ORDER BY s.id LIMIT $2`,
    [after, limit],
  );
}

/** Documents with abstract passages (those before the first heading), in id order after `after`. */
export async function abstractPage(db: Queryable, after: number, limit: number): Promise<GroupRow[]> {
  return db.query<GroupRow>(
    `SELECT d.id AS "groupId", d.id AS "documentId", ARRAY[d.title] AS "titlePath", x.ids AS "passageIds"
     FROM documents d CROSS JOIN LATERAL (
       SELECT array_agg(p.id ORDER BY p.ordinal) AS ids FROM passages p WHERE p.document_id = d.id AND p.section_id IS NULL) x
     WHERE d.id > $1 AND x.ids IS NOT NULL ORDER BY d.id LIMIT $2`,
    [after, limit],
  );
}

/** How many pairs each source gives (for the progress total and the too-few check). */
/** Counts stop at `cap` (a run's limit): a capped count need not read the whole link graph. */
export async function countLinkPairs(
  db: Queryable,
  hub: number | null,
  cap: number | null,
): Promise<{ dualLink: number; coMention: number; resolvedLinks: number }> {
  const [row] = await db.query<{ dual_link: number; co_mention: number; resolved: number }>(
    `SELECT (SELECT count(*) FROM (${dualLinkPairs(() => 'true')} LIMIT $2) a)::int AS dual_link,
            (SELECT count(*) FROM (${coMentionPairs('$1', () => 'true')} LIMIT $2) b)::int AS co_mention,
            (SELECT count(*) FROM links WHERE ${MENTION('links')})::int AS resolved`,
    [hub, cap],
  );
  return { dualLink: row.dual_link, coMention: row.co_mention, resolvedLinks: row.resolved };
}

export async function countGroups(db: Queryable): Promise<{ sections: number; abstracts: number }> {
  const [row] = await db.query<{ sections: number; abstracts: number }>(
    `SELECT (SELECT count(DISTINCT section_id) FROM passages WHERE section_id IS NOT NULL)::int AS sections,
            (SELECT count(DISTINCT document_id) FROM passages WHERE section_id IS NULL)::int AS abstracts`,
  );
  return row;
}

/** A passage as a training pair carries it. */
export interface PairPassageRow {
  passageId: number;
  documentId: number;
  sectionId: number | null;
  titlePath: string[];
  text: string;
}

/** Passages by id, in the order asked (missing ids left out). */
export async function pairPassages(db: Queryable, ids: readonly number[]): Promise<PairPassageRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.query<PairPassageRow>(
    `SELECT p.id AS "passageId", p.document_id AS "documentId", p.section_id AS "sectionId", p.title_path AS "titlePath", p.text
     FROM unnest($1::int[]) WITH ORDINALITY AS x(id, n) JOIN passages p ON p.id = x.id ORDER BY x.n`,
    [ids],
  );
  return rows;
}

/** A document's passages without their text: what In-Doc and In-Sec negatives are drawn from. */
export async function documentPassageKeys(db: Queryable, documentId: number): Promise<{ passageId: number; sectionId: number | null; titlePath: string[] }[]> {
  return db.query(`SELECT id AS "passageId", section_id AS "sectionId", title_path AS "titlePath" FROM passages WHERE document_id = $1 ORDER BY ordinal`, [
    documentId,
  ]);
}

export async function documentTitles(db: Queryable, ids: readonly number[]): Promise<{ documentId: number; title: string }[]> {
  if (ids.length === 0) return [];
  return db.query(`SELECT d.id AS "documentId", d.title FROM unnest($1::int[]) WITH ORDINALITY AS x(id, n) JOIN documents d ON d.id = x.id ORDER BY x.n`, [
    ids,
  ]);
}
