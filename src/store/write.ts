import type { PreparedDocument } from '../ingest/types';
import { DomainError, ErrorCode } from '../errors';
import type { Database, Queryable } from './db';
import { writeSuppliedVectors, type SuppliedVectorModels } from './embeddings';
import { DOCUMENT_WRITE, LINK_WRITE, PASSAGE_WRITE, SECTION_WRITE } from './rows';

/** Advisory lock held to commit by every writer of links (bulk-write.ts too). */
export const LINK_RESOLUTION_LOCK = 7240312;
/** Advisory lock class of document keys (the second key is the key's hash). */
export const DOCUMENT_KEY_LOCK = 7240313;

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
export async function writeDocument(db: Database, doc: PreparedDocument, vectors?: SuppliedVectorModels): Promise<WriteResult> {
  return db.transaction(async (tx) => {
    const result = await writeDocumentIn(tx, doc);
    // The caller's own vectors (external models) commit with the document, also when it is unchanged.
    if (vectors) await writeSuppliedVectors(tx, vectors, [{ documentId: result.documentId, doc }]);
    return result;
  });
}

export async function writeDocumentIn(tx: Queryable, doc: PreparedDocument): Promise<WriteResult> {
  // Writers of one key queue here, so a key names one document. An advisory lock rather than
  // FOR UPDATE or a unique constraint: on Citus, documents are distributed by id, so a key can be
  // neither (docs/scale-out.md); a hash collision only makes two keys' writers wait for each other.
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DOCUMENT_KEY_LOCK, doc.key]);
  const existing = await tx.query<{ id: number; contentHash: string }>('SELECT id, content_hash AS "contentHash" FROM documents WHERE key = $1', [doc.key]);
  const fields = DOCUMENT_WRITE.params(doc);
  let writeDoc: string;
  let status: WriteStatus;
  if (existing.length > 0) {
    if (existing[0].contentHash === doc.contentHash) return { status: 'unchanged', documentId: existing[0].id };
    status = 'updated';
    // Sections cascade to their passages and links; abstract passages have no section.
    await tx.query(
      `WITH p AS (DELETE FROM passages WHERE document_id = $1 AND section_id IS NULL)
       DELETE FROM sections WHERE document_id = $1`,
      [existing[0].id],
    );
    writeDoc = `UPDATE documents SET ${DOCUMENT_WRITE.assignments(DOCUMENT_PARAMS, ['key'])}, updated_at = now()
                WHERE key = ${DOCUMENT_PARAMS.key} RETURNING id`;
  } else {
    status = 'created';
    writeDoc = `INSERT INTO documents (${DOCUMENT_WRITE.names}) VALUES (${Object.values(DOCUMENT_PARAMS).join(', ')}) RETURNING id`;
  }
  const [written] = await tx.query<{ id: number; passageIds: number[] }>(`${WRITE_TREE_PREFIX} doc AS (${writeDoc}) ${WRITE_TREE_BODY}`, [
    ...fields,
    ...treeParams(doc),
  ]);
  // Deleted by id (deleteDocument) between the read and the update.
  if (!written) throw new DomainError(ErrorCode.CONFLICT, `document "${doc.key}" was deleted while it was being re-written; ingest it again`);
  const { id: documentId, passageIds } = written;
  // A model activation (EXCLUSIVE on active_encoders) checks that the model covers every document,
  // then switches. Holding ROW SHARE to commit keeps this document from landing between the two:
  // it commits before the activation starts (whose check then sees it) or after it ends (and is
  // embedded for the model now active). Other ingests and readers are not held up.
  await tx.query('LOCK TABLE active_encoders IN ROW SHARE MODE');
  // Link resolution must see documents and links of concurrent ingests: with this lock held to
  // commit, whichever transaction comes second sees the first one's rows (READ COMMITTED), so a
  // link and its target written at the same time still meet. Taken last to keep the serial part short.
  await tx.query('SELECT pg_advisory_xact_lock($1)', [LINK_RESOLUTION_LOCK]);
  await insertLinks(tx, documentId, doc, passageIds);
  await resolveLinksTo(tx, documentId, doc.key, doc.title);
  return { status, documentId };
}

/**
 * The document row, its sections and its passages in one statement (data-modifying CTEs; foreign
 * keys are checked at the end of the statement). Ids are drawn from the sequences up front so
 * parents and passages can point at sections written in the same statement.
 */
const WRITE_TREE_PREFIX = 'WITH';
/** The document's columns are the first parameters; its key names the row an update rewrites. */
const DOCUMENT_PARAMS = DOCUMENT_WRITE.placeholders(1);
/** treeParams' four, after the document's. */
const [SECTION_COUNT, PASSAGE_COUNT, SECTIONS, PASSAGES] = [1, 2, 3, 4].map((i) => `$${DOCUMENT_WRITE.count + i}`);
const WRITE_TREE_BODY = `,
  ids AS (
    SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('sections', 'id'))::int FROM generate_series(1, ${SECTION_COUNT}::int)) AS s,
           ARRAY(SELECT nextval(pg_get_serial_sequence('passages', 'id'))::int FROM generate_series(1, ${PASSAGE_COUNT}::int)) AS p
  ),
  sec AS (
    INSERT INTO sections (id, document_id, parent_id, ${SECTION_WRITE.names})
    SELECT ids.s[r.position + 1], doc.id, ids.s[r.parent_position + 1], ${SECTION_WRITE.values('r')}
    FROM doc, ids, jsonb_to_recordset(${SECTIONS}::jsonb)
      AS r(parent_position int, ${SECTION_WRITE.definitions})
  ),
  pas AS (
    INSERT INTO passages (id, document_id, section_id, ${PASSAGE_WRITE.names})
    SELECT ids.p[r.i + 1], doc.id, ids.s[r.section_position + 1], ${PASSAGE_WRITE.values('r')}
    FROM doc, ids, jsonb_to_recordset(${PASSAGES}::jsonb)
      AS r(i int, section_position int, ${PASSAGE_WRITE.definitions})
  )
  SELECT doc.id, ids.p AS "passageIds" FROM doc, ids`;

function treeParams(doc: PreparedDocument): unknown[] {
  const sections = doc.sections.map((s) => ({ parent_position: s.parentPosition, ...SECTION_WRITE.record(s) }));
  const passages = doc.passages.map((p, i) => ({ i, section_position: p.sectionPosition, ...PASSAGE_WRITE.record(p) }));
  return [doc.sections.length, doc.passages.length, JSON.stringify(sections), JSON.stringify(passages)];
}

async function insertLinks(tx: Queryable, documentId: number, doc: PreparedDocument, passageIds: number[]): Promise<void> {
  const rows = doc.passages.flatMap((p, i) => p.links.map((l) => ({ passage_id: passageIds[i], ...LINK_WRITE.record(l) })));
  if (rows.length > 0) {
    // A target resolves to the document with that key, else to one with that title (any case).
    // A join, not a subquery per link: Citus cannot run a correlated subquery over a distributed table.
    await tx.query(
      `WITH r AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(passage_id int, ${LINK_WRITE.definitions})),
       resolved AS (
         SELECT DISTINCT ON (t.target) t.target, d.id
         FROM (SELECT DISTINCT target FROM r) t JOIN documents d ON d.key = t.target OR lower(d.title) = lower(t.target)
         ORDER BY t.target, (d.key = t.target) DESC, d.id)
       INSERT INTO links (passage_id, document_id, target_document_id, ${LINK_WRITE.names})
       SELECT r.passage_id, $1, resolved.id, ${LINK_WRITE.values('r')} FROM r LEFT JOIN resolved ON resolved.target = r.target`,
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
  return db.transaction(async (tx) => {
    // What the foreign key's ON DELETE SET NULL does on one server; on Citus a link's target is on
    // another shard and has no constraint, so the delete says it (a later document can resolve them).
    await tx.query('UPDATE links SET target_document_id = NULL WHERE target_document_id = $1', [documentId]);
    const deleted = await tx.query('DELETE FROM documents WHERE id = $1 RETURNING id', [documentId]);
    return deleted.length > 0;
  });
}
