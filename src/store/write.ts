import type { PreparedDocument } from '../ingest/types';
import type { Database, Queryable } from './db';

const LINK_RESOLUTION_LOCK = 7240312;

export type WriteStatus = 'created' | 'updated' | 'unchanged';

export interface WriteResult {
  status: WriteStatus;
  documentId: number;
}

/**
 * Writes one prepared document in one transaction: a new key creates it; a known key with another
 * content hash replaces its sections, passages and links (the document id stays, so links that
 * point at it stay resolved); the same hash changes nothing. Rows go in as one multi-row statement
 * per table, so a document costs a fixed number of round trips whatever its size.
 */
export async function writeDocument(db: Database, doc: PreparedDocument): Promise<WriteResult> {
  return db.transaction((tx) => writeDocumentIn(tx, doc));
}

export async function writeDocumentIn(tx: Queryable, doc: PreparedDocument): Promise<WriteResult> {
  const existing = await tx.query<{ id: number; contentHash: string }>(
    'SELECT id, content_hash AS "contentHash" FROM documents WHERE key = $1 FOR UPDATE',
    [doc.key],
  );
  let documentId: number;
  let status: WriteStatus;
  if (existing.length > 0) {
    documentId = existing[0].id;
    if (existing[0].contentHash === doc.contentHash) return { status: 'unchanged', documentId };
    status = 'updated';
    // Sections cascade to their passages and links; abstract passages have no section.
    await tx.query(
      `WITH p AS (DELETE FROM passages WHERE document_id = $1 AND section_id IS NULL)
       DELETE FROM sections WHERE document_id = $1`,
      [documentId],
    );
    await tx.query(
      `UPDATE documents SET title = $2, abstract = $3, summary = $4, source = $5, metadata = $6::jsonb,
         content_hash = $7, updated_at = now()
       WHERE id = $1`,
      [documentId, doc.title, doc.abstract, doc.summary, doc.source, JSON.stringify(doc.metadata), doc.contentHash],
    );
  } else {
    status = 'created';
    const rows = await tx.query<{ id: number }>(
      `INSERT INTO documents (key, title, abstract, summary, source, metadata, content_hash)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING id`,
      [doc.key, doc.title, doc.abstract, doc.summary, doc.source, JSON.stringify(doc.metadata), doc.contentHash],
    );
    documentId = rows[0].id;
  }
  const passageIds = await insertTree(tx, documentId, doc);
  // Link resolution must see documents and links of concurrent ingests: with this lock held to
  // commit, whichever transaction comes second sees the first one's rows (READ COMMITTED), so a
  // link and its target written at the same time still meet. Taken last to keep the serial part short.
  await tx.query('SELECT pg_advisory_xact_lock($1)', [LINK_RESOLUTION_LOCK]);
  await insertLinks(tx, documentId, doc, passageIds);
  await resolveLinksTo(tx, documentId, doc.key, doc.title);
  return { status, documentId };
}

/** Writes sections and passages; returns the passage ids in passage order. */
async function insertTree(tx: Queryable, documentId: number, doc: PreparedDocument): Promise<number[]> {
  // Ids are taken up front so parents, passages and links can reference them in single statements.
  const [ids] = await tx.query<{ sections: number[]; passages: number[] }>(
    `SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('sections', 'id'))::int FROM generate_series(1, $1)) AS sections,
            ARRAY(SELECT nextval(pg_get_serial_sequence('passages', 'id'))::int FROM generate_series(1, $2)) AS passages`,
    [doc.sections.length, doc.passages.length],
  );
  const sectionId = (position: number | null) => (position === null ? null : ids.sections[position]);

  if (doc.sections.length > 0) {
    const rows = doc.sections.map((s) => ({
      id: sectionId(s.position),
      parent_id: sectionId(s.parentPosition),
      title: s.title,
      depth: s.depth,
      ordinal: s.ordinal,
      position: s.position,
      title_path: s.titlePath,
    }));
    await tx.query(
      `INSERT INTO sections (id, document_id, parent_id, title, depth, ordinal, position, title_path)
       SELECT r.id, $1, r.parent_id, r.title, r.depth, r.ordinal, r.position,
              ARRAY(SELECT jsonb_array_elements_text(r.title_path))
       FROM jsonb_to_recordset($2::jsonb)
         AS r(id int, parent_id int, title text, depth int, ordinal int, position int, title_path jsonb)`,
      [documentId, JSON.stringify(rows)],
    );
  }
  if (doc.passages.length > 0) {
    const rows = doc.passages.map((p, i) => ({
      id: ids.passages[i],
      section_id: sectionId(p.sectionPosition),
      ordinal: p.ordinal,
      text: p.text,
      title_path: p.titlePath,
      word_count: p.wordCount,
    }));
    await tx.query(
      `INSERT INTO passages (id, document_id, section_id, ordinal, text, title_path, word_count)
       SELECT r.id, $1, r.section_id, r.ordinal, r.text, ARRAY(SELECT jsonb_array_elements_text(r.title_path)), r.word_count
       FROM jsonb_to_recordset($2::jsonb)
         AS r(id int, section_id int, ordinal int, text text, title_path jsonb, word_count int)`,
      [documentId, JSON.stringify(rows)],
    );
  }
  return ids.passages;
}

async function insertLinks(tx: Queryable, documentId: number, doc: PreparedDocument, passageIds: number[]): Promise<void> {
  const rows = doc.passages.flatMap((p, i) =>
    p.links.map((l) => ({ passage_id: passageIds[i], target: l.target, anchor_text: l.anchorText })),
  );
  if (rows.length > 0) {
    // A target resolves to the document with that key, else to one with that title (any case).
    await tx.query(
      `INSERT INTO links (passage_id, document_id, target, target_document_id, anchor_text)
       SELECT r.passage_id, $1, r.target,
              (SELECT d.id FROM documents d
                WHERE d.key = r.target OR lower(d.title) = lower(r.target)
                ORDER BY (d.key = r.target) DESC, d.id LIMIT 1),
              r.anchor_text
       FROM jsonb_to_recordset($2::jsonb) AS r(passage_id int, target text, anchor_text text)`,
      [documentId, JSON.stringify(rows)],
    );
  }
}

/** Links written before this document existed now find it. */
async function resolveLinksTo(tx: Queryable, documentId: number, key: string, title: string): Promise<void> {
  await tx.query(
    `UPDATE links SET target_document_id = $1
     WHERE target_document_id IS NULL AND lower(target) IN (lower($2), lower($3))
       AND (target = $2 OR lower(target) = lower($3))`,
    [documentId, key, title],
  );
}

/** Deletes a document; its sections, passages and links go with it. False when there was none. */
export async function deleteDocument(db: Database, documentId: number): Promise<boolean> {
  const rows = await db.query('DELETE FROM documents WHERE id = $1 RETURNING id', [documentId]);
  return rows.length > 0;
}
