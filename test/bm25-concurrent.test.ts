import type { Database, Queryable } from '../src/store/db';
import { foldBm25Stats } from '../src/store/bm25-fold';
import { indexLexical } from '../src/store/lexical';
import { prng } from './helpers/prng';
import { useTestDatabase } from './helpers/database';

/**
 * Concurrent writers and the BM25 statistics (migration 0013): writers that overlap add to
 * different slots, so none waits for another's statistics rows, and the sums over slots (what
 * readers use) equal a recount computed here from the raw tsvectors; the fold puts them back into
 * one row each.
 *
 * An "ingest transaction" here is what an ingest does to BM25 in one transaction: the document and
 * its passages inserted (the documents trigger counts its summary), then the passages' full-text
 * vectors filled by the product's index step (indexLexical; the triggers count postings and
 * statistics at both levels). The product's writeDocumentIn also resolves links under an advisory
 * lock held to commit (store/write.ts), which orders writers by itself; it is left out so the test
 * measures BM25 alone.
 */

const WORDS = [
  'river',
  'capital',
  'bridge',
  'museum',
  'harbour',
  'mountain',
  'castle',
  'railway',
  'festival',
  'island',
  'forest',
  'market',
  'valley',
  'tower',
  'garden',
  'the',
  'of',
];
const WRITERS = 8;
/** Each transaction stays open this long after its writes (a transaction that does more work). */
const HOLD_S = 0.3;

interface Doc {
  key: string;
  title: string;
  summary: string;
  passages: string[];
}

function documents(seed: number, n: number, prefix: string): Doc[] {
  const rand = prng(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = (words: number) => Array.from({ length: words }, pick).join(' ');
  return Array.from({ length: n }, (_, i) => ({
    key: `${prefix}${i}`,
    title: `Place ${prefix}${i} ${pick()}`,
    summary: `Place ${prefix}${i} ${sentence(6)}`,
    passages: Array.from({ length: 40 }, () => sentence(10 + Math.floor(rand() * 30))),
  }));
}

/** The document and its passages, then their full-text vectors: BM25 counts both in this transaction. */
async function ingestOne(tx: Queryable, doc: Doc): Promise<number> {
  const [{ id }] = await tx.query<{ id: number }>(`INSERT INTO documents (key, title, summary, content_hash) VALUES ($1, $2, $3, md5($3)) RETURNING id`, [
    doc.key,
    doc.title,
    doc.summary,
  ]);
  await tx.query(
    `INSERT INTO passages (document_id, ordinal, text, title_path, word_count)
     SELECT $1, u.o - 1, u.t, ARRAY[$2::text], cardinality(string_to_array(u.t, ' '))
     FROM unnest($3::text[]) WITH ORDINALITY AS u(t, o)`,
    [id, doc.title, doc.passages],
  );
  expect(await indexLexical(tx, [id])).toBe(doc.passages.length);
  return id;
}

/** Lexeme → occurrences, from a tsvector's text form ('capit':3,7 'river':1). */
function parseTsvector(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/'((?:[^']|'')+)'(?::([\d,A-D]+))?/g)) out.set(m[1].replace(/''/g, "'"), m[2] ? m[2].split(',').length : 1);
  return out;
}

const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

interface Stats {
  stats: { level: string; items: number; total_length: number; total_summary: number }[];
  terms: { level: string; lexeme: string; df: number }[];
}

/** Statistics recounted from passages.search and the documents' summaries, in JS. */
async function recount(db: Database): Promise<Stats> {
  const passages = await db.query<{ document_id: number; search: string }>('SELECT document_id, search::text AS search FROM passages WHERE search IS NOT NULL');
  const summaries = await db.query<{ id: number; summary: string }>(`SELECT id, to_tsvector('english'::regconfig, summary)::text AS summary FROM documents`);
  const df = new Map<string, number>();
  const count = (level: string, lexemes: Iterable<string>) => {
    for (const l of lexemes) df.set(`${level} ${l}`, (df.get(`${level} ${l}`) ?? 0) + 1);
  };
  const p = { level: 'p', items: 0, total_length: 0, total_summary: 0 };
  const bodies = new Map<number, Map<string, number>>();
  for (const row of passages) {
    const terms = parseTsvector(row.search);
    if (terms.size === 0) continue;
    p.items++;
    p.total_length += total(terms);
    count('p', terms.keys());
    const body = bodies.get(row.document_id) ?? new Map<string, number>();
    for (const [l, n] of terms) body.set(l, (body.get(l) ?? 0) + n);
    bodies.set(row.document_id, body);
  }
  const d = { level: 'd', items: 0, total_length: 0, total_summary: 0 };
  for (const row of summaries) {
    const body = bodies.get(row.id) ?? new Map<string, number>();
    const summary = parseTsvector(row.summary);
    if (body.size + summary.size === 0) continue;
    d.items++;
    d.total_length += total(body);
    d.total_summary += total(summary);
    count('d', new Set([...body.keys(), ...summary.keys()]));
  }
  const terms = [...df].map(([k, n]) => ({ level: k.split(' ')[0], lexeme: k.slice(2), df: n }));
  return { stats: [d, p], terms: terms.sort((a, b) => `${a.level} ${a.lexeme}`.localeCompare(`${b.level} ${b.lexeme}`)) };
}

/** What readers see: every level's and term's rows summed (terms whose sum is 0 are not terms). */
async function summed(db: Database): Promise<Stats> {
  const stats = await db.query<Stats['stats'][number]>(
    `SELECT level, sum(items)::int AS items, sum(total_length)::float8 AS total_length, sum(total_summary)::float8 AS total_summary
     FROM bm25_stats GROUP BY level ORDER BY level`,
  );
  const terms = await db.query<Stats['terms'][number]>('SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY level, lexeme HAVING sum(df) <> 0');
  return { stats, terms: terms.sort((a, b) => `${a.level} ${a.lexeme}`.localeCompare(`${b.level} ${b.lexeme}`)) };
}

const slotsInUse = async (db: Database) => (await db.query<{ n: number }>('SELECT count(DISTINCT slot)::int AS n FROM bm25_stats'))[0].n;

/** Resolves once `parties` have arrived; rejects after `ms` saying how many did. */
function barrier(parties: number, ms: number): { arrive: () => Promise<void> } {
  let arrived = 0;
  let open!: () => void;
  let fail!: (error: Error) => void;
  const opened = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  const timer = setTimeout(
    () => fail(new Error(`only ${arrived} of ${parties} writers got through their writes within ${ms} ms: they wait for one another`)),
    ms,
  );
  opened.then(
    () => clearTimeout(timer),
    () => clearTimeout(timer),
  );
  return {
    arrive: () => {
      if (++arrived === parties) open();
      return opened;
    },
  };
}

interface OpenWriter {
  /** Resolves once the document is written and indexed (the transaction stays open). */
  written: Promise<void>;
  /** Commits and waits for it. */
  commit(): Promise<void>;
}

/** An ingest transaction left open after its writes, until commit(). */
function openWriter(db: Database, doc: Doc): OpenWriter {
  let wrote!: () => void;
  const written = new Promise<void>((resolve) => (wrote = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const done = db.transaction(async (tx) => {
    await ingestOne(tx, doc);
    wrote();
    await released;
  });
  return {
    // A failed write rejects here rather than leaving the test waiting.
    written: Promise.race([written, done]),
    commit: async () => {
      release();
      await done;
    },
  };
}

describe('BM25 statistics under concurrent writers', () => {
  const t = useTestDatabase();

  it('a lone writer uses slot 0 only, and the statistics equal a recount', async () => {
    for (const doc of documents(3, 3, 'lone')) await t.db.transaction((tx) => ingestOne(tx, doc));
    await t.db.query(`DELETE FROM documents WHERE key = 'lone1'`);
    expect(await t.db.query('SELECT DISTINCT slot FROM bm25_stats')).toEqual([{ slot: 0 }]);
    expect(await foldBm25Stats(t.db)).toBe(0);
    expect(await summed(t.db)).toEqual(await recount(t.db));
  });

  const onServer = process.env.DATABASE_URL ? it : it.skip;

  onServer(`PostgreSQL: ${WRITERS} concurrent ingest transactions commit independently, in less than the sum of their times`, async () => {
    const hold = (tx: Queryable) => tx.query('SELECT pg_sleep($1)', [HOLD_S]);
    // Each transaction alone (one after another): its own duration.
    const alone: number[] = [];
    for (const doc of documents(5, WRITERS, 'a')) {
      const start = performance.now();
      await t.db.transaction(async (tx) => {
        await ingestOne(tx, doc);
        await hold(tx);
      });
      alone.push(performance.now() - start);
    }
    expect(await slotsInUse(t.db)).toBe(1);

    // The same work for other documents, all at once, each holding its transaction open until
    // every one has written: were writers ordered by a statistics row, the second would wait for
    // the first's commit, which waits at the barrier, and the barrier would fail (or lock_timeout).
    const gate = barrier(WRITERS, 60_000);
    const start = performance.now();
    await Promise.all(
      documents(7, WRITERS, 'c').map((doc) =>
        t.db.transaction(async (tx) => {
          await tx.query(`SELECT set_config('lock_timeout', '30s', true)`);
          await ingestOne(tx, doc);
          await gate.arrive();
          await hold(tx);
        }),
      ),
    );
    const wall = performance.now() - start;
    const sum = alone.reduce((a, b) => a + b, 0);
    expect(wall).toBeLessThan(sum);

    // Every writer had a slot of its own; the sums are the corpus's statistics.
    expect(await slotsInUse(t.db)).toBe(WRITERS);
    const expected = await recount(t.db);
    expect(expected.stats.find((s) => s.level === 'p')!.items).toBeGreaterThanOrEqual(WRITERS * 2 * 40);
    expect(await summed(t.db)).toEqual(expected);

    // The fold leaves one row per level and term, with the same sums.
    expect(await foldBm25Stats(t.db)).toBe(WRITERS - 1);
    expect(await slotsInUse(t.db)).toBe(1);
    expect(await summed(t.db)).toEqual(expected);
    const [{ rows, terms }] = await t.db.query<{ rows: number; terms: number }>(
      `SELECT count(*)::int AS rows, count(DISTINCT (level, lexeme))::int AS terms FROM bm25_terms`,
    );
    expect(rows).toBe(terms);
  });

  onServer('PostgreSQL: a fold skips the slots of open writers and folds them once they commit', async () => {
    const [first, second, third] = documents(11, 3, 'f');
    const open: OpenWriter[] = [];
    await foldBm25Stats(t.db);
    expect(await slotsInUse(t.db)).toBe(1);
    try {
      // An open writer holding slot 0 …
      open.push(openWriter(t.db, first));
      await open[0].written;
      // … a writer that commits meanwhile (slot 1), and one more still open, which takes slot 1
      // again (the first free one).
      await t.db.transaction((tx) => ingestOne(tx, second));
      open.push(openWriter(t.db, third));
      await open[1].written;
      // Slot 0 is held: nothing is folded, and readers already see the committed writer.
      expect(await foldBm25Stats(t.db)).toBe(0);
      expect(await summed(t.db)).toEqual(await recount(t.db));
      await open[0].commit();
      // Slot 0 is free now, but slot 1 is held by the open writer: its committed rows stay.
      expect(await t.db.query('SELECT DISTINCT slot FROM bm25_stats ORDER BY slot')).toEqual([{ slot: 0 }, { slot: 1 }]);
      expect(await foldBm25Stats(t.db)).toBe(0);
      await open[1].commit();
      expect(await foldBm25Stats(t.db)).toBe(1);
      expect(await slotsInUse(t.db)).toBe(1);
      expect(await summed(t.db)).toEqual(await recount(t.db));
    } finally {
      for (const w of open) await w.commit().catch(() => undefined);
    }
  });
});
