import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { search } from '../src/retrieval/search';
import { rebuildBm25 } from '../src/store/bm25-rebuild';
import { deleteDocument } from '../src/store/write';
import type { Database } from '../src/store/db';
import { indexLexical } from '../src/store/lexical';
import { placeCorpus } from './helpers/place-corpus';
import { textSearch } from './helpers/text-search';
import { useTestDatabase } from './helpers/database';

/**
 * dhr rebuild-bm25 builds into new tables and swaps them in at the end: lexical queries from other
 * connections keep answering while it builds (from the old tables: the old statistics), a query
 * that arrives while the swap holds its locks waits and then answers from the new tables, and a
 * writer waits for the whole rebuild and is counted afterwards. The rebuild is held between build
 * and swap (and inside the swap) by its hooks, not raced.
 */

const corpus = placeCorpus;

const QUESTIONS = ['Which river flows past the castle?', 'capital museum', 'railway bridge to the island'];

/** Every lexical ranking of the questions (passages and documents, with scores). */
/**
 * The same ranking to the last bits: scores equal to 1e-9 position by position, and the same ids,
 * except that passages whose scores tie within 1e-9 may come in either order (the statistics' float
 * sums, added in another order, can turn an exact tie either way).
 */
function expectSameRanking(after: [number, number][], before: [number, number][]): void {
  expect(after).toHaveLength(before.length);
  for (let j = 0; j < before.length; ) {
    let k = j + 1;
    while (k < before.length && Math.abs(before[k][1] - before[j][1]) < 1e-9) k++;
    expect(new Set(after.slice(j, k).map(([id]) => id))).toEqual(new Set(before.slice(j, k).map(([id]) => id)));
    for (let m = j; m < k; m++) expect(after[m][1]).toBeCloseTo(before[m][1], 9);
    j = k;
  }
}

async function rankings(db: Database): Promise<[number, number][][]> {
  const out: [number, number][][] = [];
  for (const questionText of QUESTIONS) {
    out.push((await search(db, textSearch({ mode: 'LEXICAL', questionText }))).passages.map((p): [number, number] => [p.passageId, p.score]));
    out.push((await search(db, textSearch({ mode: 'LEXICAL_DOCUMENTS', questionText }))).documents.map((d): [number, number] => [d.documentId, d.score]));
  }
  return out;
}

/** A promise and the function that resolves it. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Backends of this database waiting for a lock, running `like`. */
async function waitingOnLock(db: Database, like: string): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
    [like],
  );
  return n;
}

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('PostgreSQL: lexical queries during dhr rebuild-bm25', () => {
  const t = useTestDatabase();

  beforeAll(async () => {
    await ingestDocuments(t.db, corpus(5, 30, 'd'), DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
  });

  it('answer from the old tables while it builds, wait only for the swap, and a writer is counted after it', async () => {
    const before = await rankings(t.db);
    expect(before.every((list) => list.length > 0)).toBe(true);
    // Passages of one document lose their vector: the rebuild gives it back (so the new tables differ).
    await t.db.query(`UPDATE passages SET search = NULL WHERE document_id = (SELECT id FROM documents WHERE key = 'd3')`);
    const old = await rankings(t.db);

    const built = signal();
    const swap = signal();
    const locked = signal();
    const finishSwap = signal();
    const rebuild = rebuildBm25(t.db, {
      beforeSwap: async () => {
        built.resolve();
        await swap.promise;
      },
      duringSwap: async () => {
        locked.resolve();
        await finishSwap.promise;
      },
    });
    rebuild.catch(() => undefined);
    let writer: Promise<unknown> | undefined;
    try {
      await Promise.race([built.promise, rebuild]);
      // Built, not swapped: every query answers, from the old tables (d3 still missing).
      for (let i = 0; i < 3; i++) expect(await rankings(t.db)).toEqual(old);
      // A writer waits for the rebuild (its changes to the old tables would be lost in the swap).
      writer = ingestDocuments(t.db, corpus(9, 2, 'w'), DEFAULT_INGEST_OPTIONS);
      await until(async () => (await waitingOnLock(t.db, '%INSERT INTO documents%')) > 0, 'the writer to wait');
      // Queries still answer with the writer queued.
      expect(await rankings(t.db)).toEqual(old);

      swap.resolve();
      await Promise.race([locked.promise, rebuild]);
      // The swap holds its locks: a query now waits for it, then answers from the new tables.
      const during = search(t.db, textSearch({ mode: 'LEXICAL', questionText: QUESTIONS[0] }));
      await until(async () => (await waitingOnLock(t.db, '%qterms%')) > 0, 'the query to wait for the swap');
      finishSwap.resolve();
      const result = await rebuild;
      expect(result.indexed).toBeGreaterThan(0);
      const answered = (await during).passages.map((p): [number, number] => [p.passageId, p.score]);
      // The rebuilt tables: d3 is back, so rankings are as before it lost its vectors.
      expectSameRanking(answered, before[0]);
      // The writer was counted after the swap: its documents are in the new tables' statistics.
      await writer;
      writer = undefined;
      const written = await t.db.query<{ id: number }>(`SELECT id FROM documents WHERE key LIKE 'w%'`);
      expect(written).toHaveLength(2);
      // Without them again (their counts leave the statistics exactly as they came), every ranking is
      // as before d3 lost its vectors. Checked only now: while the writer's counts are in, near-equal
      // passages can trade places, and when it lands relative to a check is a race.
      for (const { id } of written) expect(await deleteDocument(t.db, id)).toBe(true);
      const after = await rankings(t.db);
      expect(after).toHaveLength(before.length);
      after.forEach((list, i) => expectSameRanking(list, before[i]));
    } finally {
      built.resolve();
      swap.resolve();
      locked.resolve();
      finishSwap.resolve();
      await rebuild.catch(() => undefined);
      await writer;
    }

    // The writer went in after the swap and its triggers counted it in the new tables: they equal
    // a fresh rebuild of the same rows.
    await indexLexical(t.db);
    const maintained = await statistics(t.db);
    expect(maintained.passages).toBeGreaterThan(0);
    await rebuildBm25(t.db);
    expect(await statistics(t.db)).toEqual(maintained);
  });

  it('waits for a reader that holds a table, trying again after each short lock timeout, then swaps', async () => {
    const reading = signal();
    const done = signal();
    const reader = t.db.transaction(async (tx) => {
      await tx.query('SELECT count(*) FROM bm25_terms');
      reading.resolve();
      await done.promise;
    });
    try {
      await reading.promise;
      const rebuild = rebuildBm25(t.db);
      // Several tries of 200 ms go by while the reader keeps its lock; the rebuild goes on waiting.
      await until(async () => (await waitingOnLock(t.db, 'LOCK TABLE%')) > 0, 'the swap to wait');
      await new Promise((r) => setTimeout(r, 700));
      done.resolve();
      await reader;
      expect((await rebuild).passages).toBe((await statistics(t.db)).passages);
    } finally {
      done.resolve();
      await reader;
    }
  });
});

/** The statistics and postings a rebuild writes (impact aside), summed over slots. */
async function statistics(db: Database) {
  const [counts] = await db.query<{ passages: number; documents: number; passage_length: number; document_length: number }>(
    `SELECT (SELECT sum(items)::int FROM bm25_stats WHERE level = 'p') AS passages,
            (SELECT sum(items)::int FROM bm25_stats WHERE level = 'd') AS documents,
            (SELECT sum(total_length)::float8 FROM bm25_stats WHERE level = 'p') AS passage_length,
            (SELECT sum(total_length + total_summary)::float8 FROM bm25_stats WHERE level = 'd') AS document_length`,
  );
  return {
    ...counts,
    terms: await db.query('SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY 1, 2 HAVING sum(df) > 0 ORDER BY 1, 2'),
    passagePostings: await db.query('SELECT lexeme, document_id, passage_id, tf, length FROM passage_postings ORDER BY 1, 2, 3'),
    documentPostings: await db.query('SELECT lexeme, document_id, tf_body, tf_summary, length_body, length_summary FROM document_postings ORDER BY 1, 2'),
  };
}
