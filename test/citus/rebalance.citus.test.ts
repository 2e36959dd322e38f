import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { ingest } from '../../src/pipeline/ingest';
import { search } from '../../src/retrieval/search';
import { rebuildBm25 } from '../../src/store/bm25-rebuild';
import type { Database } from '../../src/store/db';
import { createCitusDatabase, createSingleDatabase, type CitusTestDatabase } from '../helpers/citus';
import { prng } from '../helpers/prng';
import { textSearch } from '../helpers/text-search';

/**
 * Scaling out a running store (docs/scale-out.md, "Rebalancing"): a distributed store on one
 * worker, a second worker added, shard groups moved to it by Citus's rebalancer. Rankings must not
 * move, and writes after the move (ingest, delete, re-ingest) must keep BM25's corpus-wide
 * statistics and rankings equal to one server given the same writes: the moved shard groups' BM25
 * triggers run on the new worker, through shard-group views that exist only once made there.
 */

const WORDS = [
  'river',
  'mountain',
  'engine',
  'protein',
  'violin',
  'harbor',
  'glacier',
  'senate',
  'orbit',
  'copper',
  'theory',
  'market',
  'island',
  'fossil',
  'poetry',
  'canal',
  'reactor',
  'desert',
  'opera',
  'vaccine',
];

function corpus(seed: number, count: number, prefix = 'doc') {
  const rand = prng(seed);
  const word = () => WORDS[Math.floor(rand() * rand() * WORDS.length)];
  const text = (n: number) => Array.from({ length: n }, word).join(' ');
  return Array.from({ length: count }, (_, i) => ({
    key: `${prefix}-${i}`,
    title: `${word()} ${word()} ${i}`,
    abstract: `${text(5)}.`,
    sections: Array.from({ length: 3 }, (_, s) => ({ title: word(), text: `${text(6 + s * 5)}.` })),
  }));
}

const QUESTIONS = ['river of the mountain', 'engine protein violin', 'harbor glacier senate orbit', 'copper theory market island'];

const lexical = (mode: 'LEXICAL' | 'LEXICAL_DOCUMENTS', questionText: string) => textSearch({ mode, questionText, exact: true, k1: 50, k2: 50 });

/** Per question and level, [key, score] in rank order (keys: ids are drawn differently by the two stores). */
async function rankings(db: Database): Promise<[string, number][][]> {
  const keyOf = new Map((await db.query<{ id: number; key: string }>('SELECT id, key FROM documents')).map((r) => [r.id, r.key]));
  const passageKey = new Map(
    (
      await db.query<{ id: number; key: string; ordinal: number }>('SELECT p.id, d.key, p.ordinal FROM passages p JOIN documents d ON d.id = p.document_id')
    ).map((r) => [r.id, `${r.key}#${r.ordinal}`]),
  );
  const out: [string, number][][] = [];
  for (const q of QUESTIONS) {
    out.push((await search(db, lexical('LEXICAL', q))).passages.map((p): [string, number] => [passageKey.get(p.passageId)!, p.score]));
    out.push((await search(db, lexical('LEXICAL_DOCUMENTS', q))).documents.map((d): [string, number] => [keyOf.get(d.documentId)!, d.score]));
  }
  return out;
}

/**
 * The same items with the same scores, in the same order except where two scores tie (float
 * summation order differs across shards, so exact ties may break either way).
 */
function expectSameRankings(actual: [string, number][][], expected: [string, number][][]) {
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-6 * Math.max(1, Math.abs(b));
  expect(actual.map((list) => list.length)).toEqual(expected.map((list) => list.length));
  actual.forEach((list, i) => {
    const scoreOf = new Map(expected[i]);
    list.forEach(([key, score], rank) => {
      if (!close(score, scoreOf.get(key) ?? NaN)) expect({ key, score }).toEqual({ key, score: scoreOf.get(key) });
      if (!close(score, expected[i][rank][1])) expect({ rank, key, score }).toEqual({ rank, key: expected[i][rank][0], score: expected[i][rank][1] });
    });
  });
  expect(actual.some((list) => list.length > 0)).toBe(true);
}

/** Corpus-wide statistics: summed over shard groups on Citus, one row per level on one server. */
const stats = (db: Database) =>
  db.query(
    'SELECT level, sum(items)::int AS items, sum(total_length)::float8 AS total_length, sum(total_summary)::float8 AS total_summary FROM bm25_stats GROUP BY level ORDER BY level',
  );

async function writeBoth(dbs: Database[], fn: (db: Database) => Promise<void>) {
  for (const db of dbs) await fn(db);
}

describe('Citus: shard groups rebalanced onto a worker added later', () => {
  let citus: CitusTestDatabase;
  let single: { db: Database; drop(): Promise<void> };

  beforeAll(async () => {
    citus = await createCitusDatabase({ workers: 1 });
    single = await createSingleDatabase();
    for (const db of [citus.db, single.db]) {
      for (const d of corpus(7, 40)) await ingest(db, [d], { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
    }
  });
  afterAll(async () => {
    await citus?.drop();
    await single?.drop();
  });

  const placements = async () =>
    (
      await citus.db.query<{ node: string; n: number }>(
        `SELECT n.nodename || ':' || n.nodeport AS node, count(*)::int AS n
         FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) JOIN pg_dist_shard s USING (shardid)
         WHERE s.logicalrelid = 'documents'::regclass GROUP BY 1 ORDER BY 1`,
      )
    ).map((r) => [r.node, r.n]);

  it('answers as before and as one server after the move, and keeps BM25 corpus-wide through later writes', async () => {
    expect(citus.workers.length).toBeGreaterThanOrEqual(2);
    expect((await placements()).map(([node]) => node)).toEqual([citus.workers[0]]);
    const before = await rankings(citus.db);
    expectSameRankings(before, await rankings(single.db));

    const [host, port] = citus.workers[1].split(':');
    await citus.db.query('SELECT citus_add_node($1, $2::int)', [host, port]);
    // Synchronous, and blocking writes to a shard group while it is copied (no logical replication
    // slots to clean up in a test); citus_rebalance_start() is the background form (docs/scale-out.md).
    await citus.db.query("SELECT rebalance_table_shards(shard_transfer_mode => 'block_writes')");
    const spread = await placements();
    expect(spread.map(([node]) => node)).toEqual([...citus.workers.slice(0, 2)].sort());
    expect(spread.every(([, n]) => Number(n) > 0)).toBe(true);

    expectSameRankings(await rankings(citus.db), before);
    expect(await stats(citus.db)).toEqual(await stats(single.db));
    // The moved groups' old placements can be dropped (the old worker's shard-group views on them must not block it).
    await citus.db.exec('CALL citus_cleanup_orphaned_resources()');
    expect(await citus.db.query('SELECT object_name FROM pg_dist_cleanup')).toEqual([]);

    // Writes after the move, the same on both stores: new documents (some land on moved groups),
    // a delete, and a re-ingest under existing keys with new text.
    await writeBoth([citus.db, single.db], async (db) => {
      for (const d of corpus(11, 12, 'late')) await ingest(db, [d], { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
      await db.query(`DELETE FROM documents WHERE key = ANY($1::text[])`, [['doc-3', 'doc-17', 'doc-30']]);
      for (const d of corpus(13, 40).slice(5, 12)) await ingest(db, [d], { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
    });
    // Every document's shard group wrote its postings: each level counts every document / passage.
    const [{ documents, passages }] = await citus.db.query<{ documents: number; passages: number }>(
      'SELECT (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM passages) AS passages',
    );
    expect(await stats(citus.db)).toEqual(await stats(single.db));
    expect((await stats(citus.db)).map((r) => r.items)).toEqual([documents, passages]);
    expectSameRankings(await rankings(citus.db), await rankings(single.db));
  });

  it('refuses the set-based BM25 rebuild (one server only) and changes nothing', async () => {
    const before = await stats(citus.db);
    await expect(rebuildBm25(citus.db)).rejects.toThrow(/not on Citus/);
    expect(await stats(citus.db)).toEqual(before);
  });
});
