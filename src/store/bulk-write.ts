import type { PreparedDocument } from '../ingest/types';
import { DomainError, ErrorCode } from '../errors';
import type { Database, Queryable } from './db';
import { insertBatchLinks, type BatchDocument } from './bulk-links';
import { writeSuppliedVectors, type SuppliedVectorModels } from './embeddings';
import { DOCUMENT_WRITE, PASSAGE_WRITE, SECTION_WRITE } from './rows';
import { DOCUMENT_KEY_LOCK, LINK_RESOLUTION_LOCK, type WriteResult } from './write';

export interface BatchHooks {
  /** Called inside the transaction once every row, posting and statistic is written, before commit (crash tests). */
  beforeCommit?: () => void;
  /** The external models that take the documents' own vectors (written in the batch's transaction). */
  vectors?: SuppliedVectorModels;
}

/**
 * Writes a batch of prepared documents (distinct keys) in one transaction, set-based: a few
 * multi-row statements for the whole batch, passages written with their full-text vector, and
 * BM25 postings and statistics built once for the batch (migration 0012 makes the insert and
 * update triggers skip while `dhr.bm25_deferred` is on). Per document it does what
 * `writeDocumentIn` does — a new key creates, another content hash replaces (same id), the same
 * hash changes nothing, links resolve as if the batch's documents were written one by one in
 * order — and the batch commits whole or not at all, so a crash never leaves it half-indexed.
 * Results are in the order of `docs`.
 */
export async function writeBatch(db: Database, docs: readonly PreparedDocument[], hooks: BatchHooks = {}): Promise<WriteResult[]> {
  if (new Set(docs.map((d) => d.key)).size !== docs.length) {
    throw new DomainError(ErrorCode.BAD_USER_INPUT, 'a bulk write batch holds each document key once');
  }
  return db.transaction(async (tx) => {
    const results = await writeBatchIn(tx, docs);
    if (hooks.vectors)
      await writeSuppliedVectors(
        tx,
        hooks.vectors,
        results.map((r, i) => ({ documentId: r.documentId, doc: docs[i] })),
      );
    hooks.beforeCommit?.();
    return results;
  });
}

/** writeBatch's statements inside the caller's transaction (an ingest job's batch: pipeline/jobs/ingest-batch.ts); keys must be distinct. */
export async function writeBatchIn(tx: Queryable, docs: readonly PreparedDocument[]): Promise<WriteResult[]> {
  await tx.query(`SELECT set_config('dhr.bm25_deferred', 'on', true)`);
  // The same per-key lock as writeDocumentIn, taken in one order so two batches cannot deadlock.
  await tx.query('SELECT count(pg_advisory_xact_lock($1, h))::int FROM (SELECT DISTINCT hashtext(k) AS h FROM unnest($2::text[]) k ORDER BY 1) x', [
    DOCUMENT_KEY_LOCK,
    docs.map((d) => d.key),
  ]);
  const existing = new Map(
    (
      await tx.query<{ id: number; key: string; title: string; contentHash: string }>(
        'SELECT id, key, title, content_hash AS "contentHash" FROM documents WHERE key = ANY($1::text[])',
        [docs.map((d) => d.key)],
      )
    ).map((r) => [r.key, r]),
  );
  const results: WriteResult[] = new Array(docs.length);
  const written: { ordinal: number; doc: PreparedDocument; id: number | null; oldTitle: string | null }[] = [];
  docs.forEach((doc, ordinal) => {
    const old = existing.get(doc.key);
    if (old && old.contentHash === doc.contentHash) results[ordinal] = { status: 'unchanged', documentId: old.id };
    else written.push({ ordinal, doc, id: old?.id ?? null, oldTitle: old?.title ?? null });
  });
  if (written.length === 0) return results;

  const replaced = written.flatMap((w) => (w.id === null ? [] : [w.id]));
  if (replaced.length > 0) {
    // Passages first, in one statement, so their delete trigger subtracts their postings once
    // (through the sections' cascade it would fire once per section); links go with them.
    await tx.query('DELETE FROM passages WHERE document_id = ANY($1::int[])', [replaced]);
    await tx.query('DELETE FROM sections WHERE document_id = ANY($1::int[])', [replaced]);
  }
  const ids = await writeDocumentRows(tx, written);
  const documentIds = written.map((w, i) => {
    const id = ids[i];
    // Deleted by id (deleteDocument) between the read and the update.
    if (id === undefined) throw new DomainError(ErrorCode.CONFLICT, `document "${w.doc.key}" was deleted while it was being re-written; ingest it again`);
    results[w.ordinal] = { status: w.id === null ? 'created' : 'updated', documentId: id };
    return id;
  });
  const passageIds = await writeTreeRows(
    tx,
    written.map((w) => w.doc),
    documentIds,
  );
  await applyBm25(tx, documentIds);
  // As writeDocumentIn: ROW SHARE on active_encoders to commit (an activation cannot cross the
  // batch), then the link lock, last, after the BM25 statistics rows (the order every writer uses).
  await tx.query('LOCK TABLE active_encoders IN ROW SHARE MODE');
  await tx.query('SELECT pg_advisory_xact_lock($1)', [LINK_RESOLUTION_LOCK]);
  const batch: BatchDocument[] = written.map((w, i) => ({
    id: documentIds[i],
    ordinal: w.ordinal,
    created: w.id === null,
    key: w.doc.key,
    title: w.doc.title,
    oldTitle: w.oldTitle,
  }));
  await insertBatchLinks(
    tx,
    batch,
    written.flatMap((w, i) =>
      w.doc.passages.flatMap((p, j) => p.links.map((l) => ({ ordinal: w.ordinal, documentId: documentIds[i], passageId: passageIds[i][j], ...l }))),
    ),
  );
  return results;
}

/** New documents inserted, changed ones updated, in one statement; their ids in the order given (undefined: the row is gone). */
async function writeDocumentRows(tx: Queryable, written: { doc: PreparedDocument; id: number | null }[]): Promise<(number | undefined)[]> {
  const rows = written.map(({ doc, id }, i) => ({ i, id, ...DOCUMENT_WRITE.record(doc) }));
  // An update keeps the key: it is how the row was found.
  const out = await tx.query<{ i: number; id: number }>(
    `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(i int, id int, ${DOCUMENT_WRITE.definitions})),
     upd AS (UPDATE documents d SET ${DOCUMENT_WRITE.assignments('r', ['key'])}, updated_at = now()
             FROM r WHERE r.id IS NOT NULL AND d.id = r.id RETURNING r.i, d.id),
     ins AS (INSERT INTO documents (${DOCUMENT_WRITE.names})
             SELECT ${DOCUMENT_WRITE.values('r')} FROM r WHERE r.id IS NULL ORDER BY r.i
             RETURNING id, key)
     SELECT i, id FROM upd UNION ALL SELECT r.i, ins.id FROM ins JOIN r ON r.key = ins.key`,
    [JSON.stringify(rows)],
  );
  const ids: (number | undefined)[] = new Array(written.length);
  for (const r of out) ids[r.i] = r.id;
  return ids;
}

/**
 * Sections and passages of every document in one statement (ids drawn up front, as in
 * writeDocumentIn), each passage with its full-text vector. Returns each document's passage ids.
 */
async function writeTreeRows(tx: Queryable, docs: PreparedDocument[], documentIds: number[]): Promise<number[][]> {
  const sections: object[] = [];
  const passages: object[] = [];
  let sectionBase = 0;
  docs.forEach((doc, d) => {
    for (const s of doc.sections) {
      sections.push({
        g: sectionBase + s.position,
        document_id: documentIds[d],
        parent_g: s.parentPosition === null ? null : sectionBase + s.parentPosition,
        ...SECTION_WRITE.record(s),
      });
    }
    for (const p of doc.passages) {
      passages.push({
        i: passages.length,
        document_id: documentIds[d],
        section_g: p.sectionPosition === null ? null : sectionBase + p.sectionPosition,
        ...PASSAGE_WRITE.record(p),
      });
    }
    sectionBase += doc.sections.length;
  });
  const [{ p }] = await tx.query<{ p: number[] }>(
    `WITH ids AS (
       SELECT ARRAY(SELECT nextval(pg_get_serial_sequence('sections', 'id'))::int FROM generate_series(1, $1::int)) AS s,
              ARRAY(SELECT nextval(pg_get_serial_sequence('passages', 'id'))::int FROM generate_series(1, $2::int)) AS p
     ),
     sec AS (
       INSERT INTO sections (id, document_id, parent_id, ${SECTION_WRITE.names})
       SELECT ids.s[r.g + 1], r.document_id, ids.s[r.parent_g + 1], ${SECTION_WRITE.values('r')}
       FROM ids, jsonb_to_recordset($3::jsonb)
         AS r(g int, document_id int, parent_g int, ${SECTION_WRITE.definitions})
     ),
     pas AS (
       INSERT INTO passages (id, document_id, section_id, ${PASSAGE_WRITE.names}, search)
       SELECT ids.p[r.i + 1], r.document_id, ids.s[r.section_g + 1], ${PASSAGE_WRITE.values('r', { titlePath: 't.path' })},
              to_tsvector('english'::regconfig, passage_search_text(t.path, r.text))
       FROM ids, jsonb_to_recordset($4::jsonb)
         AS r(i int, document_id int, section_g int, ${PASSAGE_WRITE.definitions}),
         LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(r.title_path)) AS path) t
     )
     SELECT ids.p FROM ids`,
    [sections.length, passages.length, JSON.stringify(sections), JSON.stringify(passages)],
  );
  const out: number[][] = [];
  let at = 0;
  for (const doc of docs) {
    out.push(p.slice(at, at + doc.passages.length));
    at += doc.passages.length;
  }
  return out;
}

/**
 * The batch's BM25 postings and statistics, once: 0007's functions, called as its triggers would
 * call them for these rows. bm25_apply_passages recounts the documents it touched; those with no
 * lexeme in any passage (it never sees them) are recounted for their summary alone.
 */
async function applyBm25(tx: Queryable, documentIds: number[]): Promise<void> {
  await tx.query(
    `SELECT bm25_apply_passages(1, array_agg(id ORDER BY id), array_agg(document_id ORDER BY id), array_agg(search ORDER BY id))
     FROM passages WHERE document_id = ANY($1::int[]) AND search IS NOT NULL HAVING count(*) > 0`,
    [documentIds],
  );
  await tx.query(
    `SELECT bm25_refresh_documents(array(
       SELECT d FROM unnest($1::int[]) d
       WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.document_id = d AND length(p.search) > 0) ORDER BY 1))`,
    [documentIds],
  );
}
