import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database, Queryable } from './db';

/**
 * The BM25 index of migration 0026 (pg_textsearch over each indexed passage's search text), where
 * the store has one: a PGlite store (unless made with PGLITE_BM25_INDEX=false), not PostgreSQL 15
 * or Citus. Passage BM25 then takes its candidates
 * from the index and scores them exactly from the postings (retrieval/statements/bm25.ts).
 */
/** The file that says a PGlite folder's store has the BM25 index, so its extension must be loaded (store/pglite.ts). */
export const BM25_INDEX_MARKER = 'dhr-bm25-index';

export const BM25_INDEX = { table: 'passage_search_texts', index: 'passage_search_texts_bm25', extension: 'pg_textsearch' } as const;

/** Whether the index is there and valid (a build that died leaves none: the postings' path). */
export async function hasBm25Index(db: Queryable): Promise<boolean> {
  const [{ present }] = await db.query<{ present: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    WHERE c.relname = $1 AND c.relnamespace = 'public'::regnamespace AND i.indisvalid) AS present`,
    [BM25_INDEX.index],
  );
  return present;
}

/**
 * Found once per open store (migrations run before the first search, and none drops the index),
 * so a search pays no catalogue lookup. Keyed by the store's statement counter: one per opened
 * database, and the same object behind the wrappers that give each request its share of the pool
 * (connection-share.ts), which are new objects every request.
 */
const found = new WeakMap<object, Promise<boolean>>();

export function bm25IndexOf(db: Database): Promise<boolean> {
  if (db.distributed) return Promise.resolve(false);
  const key = db.statements;
  let known = found.get(key);
  if (!known) {
    known = hasBm25Index(db);
    // A failed lookup (the store closing) is asked again next time, not remembered.
    void known.catch(() => found.delete(key));
    found.set(key, known);
  }
  return known;
}

/** How passage BM25 finds its candidates in this store, as /readyz and `stats` report it. */
export type Bm25Candidates = 'pg_textsearch' | 'postings';

export async function bm25Candidates(db: Database): Promise<Bm25Candidates> {
  return (await bm25IndexOf(db)) ? 'pg_textsearch' : 'postings';
}

/**
 * At open: rebuilds the BM25 index when its corpus statistics disagree with its table. A deleted
 * row stays counted by pg_textsearch (1.5, in PGlite 0.5) until the index is rebuilt, which skews
 * every candidate's rank; and a process killed while writing leaves the index's recovery pages
 * unreadable. A restart keeps the count (pg_textsearch 0.5, in PGlite 0.4, lost that of rows
 * indexed after the build). A rebuild writes the statistics as they are (≈ 3 s at 31,000 passages, 2
 * cores), and is needed only after deletes. The count is read from bm25_summarize_index's report
 * (the extension has no other way to ask); a report it cannot read, or an index it cannot read
 * after a crash, counts as disagreeing.
 * Returns whether it rebuilt.
 */
export async function refreshBm25Index(db: Database): Promise<boolean> {
  if (!(await hasBm25Index(db))) return false;
  // Later opens of this folder load the extension whatever PGLITE_BM25_INDEX says (store/pglite.ts).
  if (db.kind === 'pglite' && db.location !== 'memory://' && !existsSync(join(db.location, BM25_INDEX_MARKER))) {
    writeFileSync(join(db.location, BM25_INDEX_MARKER), 'this store has the BM25 index of migration 0026: PGlite loads pg_textsearch\n');
  }
  const agrees = await db
    .query<{ report: string; rows: number }>(`SELECT bm25_summarize_index($1) AS report, (SELECT count(*)::int FROM ${BM25_INDEX.table}) AS rows`, [
      BM25_INDEX.index,
    ])
    .then(
      ([{ report, rows }]) => Number(/total_docs:\s*(\d+)/.exec(report)?.[1] ?? Number.NaN) === rows,
      // A process killed while writing leaves the index's recovery pages unreadable ("Invalid
      // docid page magic … stopping recovery", and no candidates): rebuilt from its table.
      () => false,
    );
  if (agrees) return false;
  await db.exec(`REINDEX INDEX ${BM25_INDEX.index}`);
  return true;
}
