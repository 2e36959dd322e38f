import type { Queryable } from './db';
import { LINK_WRITE } from './rows';

/** A document a bulk batch wrote: its place in the batch and what it was before (a re-write). */
export interface BatchDocument {
  id: number;
  /** Position in the batch: the order the documents would have been written one by one. */
  ordinal: number;
  created: boolean;
  key: string;
  title: string;
  /** The title before this write (re-writes only). */
  oldTitle: string | null;
}

export interface BatchLink {
  /** The ordinal of the document whose passage holds the link. */
  ordinal: number;
  documentId: number;
  passageId: number;
  target: string;
  anchorText: string;
}

/**
 * The batch's links, and links elsewhere that now find a batch document, resolved exactly as
 * writing the documents one by one in batch order would (writeDocumentIn's insertLinks, then
 * resolveLinksTo): a link written by the document at ordinal o resolves to a document with its key
 * (preferred) or title as they stood at o — documents outside the batch, batch documents up to o
 * as written, later re-written ones with their old title, later new ones not at all; a link left
 * unresolved (from before, or from the batch) goes to the first batch document, in order, whose
 * key or title it names.
 */
export async function insertBatchLinks(tx: Queryable, batch: readonly BatchDocument[], links: readonly BatchLink[]): Promise<void> {
  const b = JSON.stringify(batch.map((d) => ({ id: d.id, ord: d.ordinal, created: d.created, key: d.key, title: d.title, old_title: d.oldTitle })));
  if (links.length > 0) {
    await tx.query(
      `WITH b AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS b(id int, ord int, created boolean, key text, title text, old_title text)),
       r AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(n int, ord int, document_id int, passage_id int, ${LINK_WRITE.definitions})),
       t AS (SELECT DISTINCT target FROM r),
       -- Joins on the key and lower(title) indexes, as insertLinks does (no subquery per link: Citus).
       m AS (
         SELECT t.target, d.id, d.key = t.target AS by_key, false AS old
           FROM t JOIN documents d ON d.key = t.target OR lower(d.title) = lower(t.target)
         UNION ALL
         SELECT t.target, b.id, false, true FROM t JOIN b ON NOT b.created AND lower(b.old_title) = lower(t.target)
       ),
       resolved AS (
         SELECT DISTINCT ON (r.n) r.n, m.id
         FROM r JOIN m ON m.target = r.target LEFT JOIN b ON b.id = m.id
         WHERE CASE WHEN m.old THEN b.ord > r.ord
                    ELSE b.id IS NULL OR b.ord <= r.ord OR (NOT b.created AND m.by_key) END
         ORDER BY r.n, m.by_key DESC, m.id)
       INSERT INTO links (passage_id, document_id, target_document_id, ${LINK_WRITE.names})
       SELECT r.passage_id, r.document_id, resolved.id, ${LINK_WRITE.values('r')} FROM r LEFT JOIN resolved USING (n) ORDER BY r.n`,
      [b, JSON.stringify(links.map((l, n) => ({ n, ord: l.ordinal, document_id: l.documentId, passage_id: l.passageId, ...LINK_WRITE.record(l) })))],
    );
  }
  // resolveLinksTo for each batch document in order: the first that matches wins. A link of the
  // batch left unresolved above matches no document at or before its own.
  await tx.query(
    `WITH b AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS b(id int, ord int, key text, title text)),
     first AS (
       SELECT DISTINCT ON (l.id) l.id AS link_id, b.id
       FROM links l JOIN b ON l.target = b.key OR lower(l.target) = lower(b.title)
       WHERE l.target_document_id IS NULL
         AND lower(l.target) = ANY(SELECT lower(key) FROM b UNION ALL SELECT lower(title) FROM b)
       ORDER BY l.id, b.ord)
     UPDATE links l SET target_document_id = first.id FROM first WHERE l.id = first.link_id`,
    [b],
  );
}
