/**
 * A bulk ingest into a store without postings indexes them once at its end (
 * store/deferred-indexes.ts): the same postings and statistics as the usual way, the same indexes
 * afterwards, none while it loads; and a store a load left without them (it died half way) gets
 * them at its next open. PostgreSQL only: on PGlite and Citus the bulk path never defers.
 */
import { prng } from './helpers/prng';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import type { DocumentInput } from '../src/ingest/types';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingest } from '../src/pipeline/ingest';
import { deferPostingsIndexes } from '../src/store/deferred-indexes';
import { openMigratedDatabase } from '../src/store/open';
import type { Database } from '../src/store/db';

const WORDS = ['river', 'harbour', 'grain', 'timber', 'mountain', 'valley', 'railway', 'freight', 'winter', 'plain', 'border', 'coast', 'the', 'of'];

function corpus(documents: number, seed: number): DocumentInput[] {
  const rand = prng(seed);
  const sentence = () => Array.from({ length: 4 + Math.floor(rand() * 10) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ') + '.';
  return Array.from({ length: documents }, (_, d) => ({
    key: `doc-${seed}-${d}`,
    title: `Country ${d}`,
    abstract: `${sentence()} ${sentence()}`,
    sections: Array.from({ length: 2 + (d % 3) }, (_, s) => ({ title: `Topic ${s}`, text: `${sentence()} ${sentence()} Note quokka${d}.` })),
  }));
}

/** What BM25 holds, impact aside (an ordering hint computed with the averages at write time). */
const BM25 = {
  passagePostings:
    'SELECT lexeme, d.key, p.ordinal, tf, length FROM passage_postings pp JOIN passages p ON p.id = pp.passage_id JOIN documents d ON d.id = pp.document_id ORDER BY 1, 2, 3',
  documentPostings:
    'SELECT lexeme, d.key, tf_body, tf_summary, length_body, length_summary FROM document_postings dp JOIN documents d ON d.id = dp.document_id ORDER BY 1, 2',
  stats:
    'SELECT level, sum(items)::bigint AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary FROM bm25_stats GROUP BY level ORDER BY level',
  terms: 'SELECT level, lexeme, sum(df)::int AS df FROM bm25_terms GROUP BY level, lexeme HAVING sum(df) > 0 ORDER BY 1, 2',
};
const INDEXES = `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename IN ('passage_postings', 'document_postings') ORDER BY 1, 2`;

async function snapshot(db: Database) {
  const out: Record<string, unknown[]> = {};
  for (const [name, sql] of Object.entries(BM25)) out[name] = await db.query(sql);
  return out;
}

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('bulk ingest into an empty store, postings indexed once at the end (PostgreSQL)', () => {
  const stores: TestDatabase[] = [];
  const fresh = async () => {
    const t = await createTestDatabase();
    stores.push(t);
    return t;
  };
  afterAll(async () => {
    for (const t of stores) await t.drop();
  });

  it('gives the same postings, statistics and indexes as the usual way, and has none of the indexes while it loads', async () => {
    const docs = corpus(120, 7);
    const usual = await fresh();
    const deferred = await fresh();
    const indexesBefore = await deferred.db.query(INDEXES);
    expect(indexesBefore.length).toBe(5);

    const plain = await ingest(usual.db, docs, { ...DEFAULT_INGEST_OPTIONS, bulk: true, batchPassages: 60, deferIndexesFrom: 0 });
    // Read at the first batch's commit, on a connection of its own: the indexes are away then.
    let whileLoading: Promise<unknown[]> | undefined;
    const result = await ingest(deferred.db, docs, {
      ...DEFAULT_INGEST_OPTIONS,
      bulk: true,
      batchPassages: 60,
      concurrency: 1,
      deferIndexesFrom: 1,
      onEvent: (event) => {
        if (event.stage === 'batch' && event.committed && event.batch === 1) whileLoading = deferred.db.query(INDEXES);
      },
    });
    expect(result.created).toBe(120);
    expect(result.indexed).toBe(plain.indexed);
    expect(await whileLoading).toEqual([]);

    expect(await snapshot(deferred.db)).toEqual(await snapshot(usual.db));
    expect(await deferred.db.query(INDEXES)).toEqual(indexesBefore);
    expect(await deferred.db.query('SELECT * FROM deferred_indexes')).toEqual([]);
  }, 120_000);

  it('drops the indexes only while both postings tables are empty, and records how to build each', async () => {
    const t = await fresh();
    await ingest(t.db, corpus(3, 8), { ...DEFAULT_INGEST_OPTIONS, bulk: false });
    expect(await deferPostingsIndexes(t.db)).toBe(false);
    expect((await t.db.query(INDEXES)).length).toBe(5);

    const empty = await fresh();
    expect(await deferPostingsIndexes(empty.db)).toBe(true);
    expect(await empty.db.query(INDEXES)).toEqual([]);
    const recorded = await empty.db.query<{ name: string }>('SELECT name FROM deferred_indexes ORDER BY name');
    expect(recorded.map((r) => r.name)).toEqual([
      'document_postings_document_idx',
      'document_postings_impact_idx',
      'document_postings_pkey',
      'passage_postings_impact_idx',
      'passage_postings_pkey',
    ]);
    // Once deferred, a second load does not defer again (the first owes the build).
    expect(await deferPostingsIndexes(empty.db)).toBe(false);
  }, 60_000);

  it('a store a load left without its postings indexes gets them at its next open, its BM25 unchanged', async () => {
    const reference = await fresh();
    const indexes = await reference.db.query(INDEXES);
    const docs = corpus(40, 9);
    await ingest(reference.db, docs, { ...DEFAULT_INGEST_OPTIONS, bulk: true, batchPassages: 60, deferIndexesFrom: 0 });

    // As a load that died after its drop and some batches leaves it.
    const t = await fresh();
    expect(await deferPostingsIndexes(t.db)).toBe(true);
    await ingest(t.db, docs, { ...DEFAULT_INGEST_OPTIONS, bulk: true, batchPassages: 60, deferIndexesFrom: 0 });
    expect(await t.db.query(INDEXES)).toEqual([]);

    const reopened = await openMigratedDatabase({ databaseUrl: t.url!, dataDir: '' });
    try {
      expect(await reopened.query(INDEXES)).toEqual(indexes);
      expect(await reopened.query('SELECT * FROM deferred_indexes')).toEqual([]);
      expect(await snapshot(reopened)).toEqual(await snapshot(reference.db));
    } finally {
      await reopened.close();
    }
  }, 120_000);
});
