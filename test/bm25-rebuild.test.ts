import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import { search } from '../src/retrieval/search';
import { rebuildBm25 } from '../src/store/bm25-rebuild';
import type { Database } from '../src/store/db';
import { indexLexical } from '../src/store/lexical';
import { placeCorpus } from './helpers/place-corpus';
import { textSearch } from './helpers/text-search';
import { createTestDatabase, type TestDatabase } from './helpers/database';

/**
 * The set-based rebuild against what the triggers maintained on the same rows: every posting,
 * length, document frequency and statistic equal (impact aside, which the rebuild computes at the
 * final average lengths: checked here against that formula), the indexes as before, the triggers
 * working afterwards, and the same exact BM25 rankings.
 */

const corpus = placeCorpus;

interface Snapshot {
  stats: Record<string, unknown>[];
  terms: Record<string, unknown>[];
  passagePostings: Record<string, unknown>[];
  documentPostings: Record<string, unknown>[];
  lengths: Record<string, unknown>[];
  indexes: Record<string, unknown>[];
}

/** Every BM25 row, impact left out; the postings tables' index definitions. */
async function snapshot(db: Database): Promise<Snapshot> {
  return {
    stats: await db.query('SELECT level, items::int, total_length, total_summary FROM bm25_stats ORDER BY level'),
    terms: await db.query('SELECT level, lexeme, df FROM bm25_terms WHERE df > 0 ORDER BY level, lexeme'),
    passagePostings: await db.query('SELECT lexeme, document_id, passage_id, tf, length FROM passage_postings ORDER BY 1, 2, 3'),
    documentPostings: await db.query('SELECT lexeme, document_id, tf_body, tf_summary, length_body, length_summary FROM document_postings ORDER BY 1, 2'),
    lengths: await db.query('SELECT document_id, length_body, length_summary FROM document_lengths ORDER BY 1'),
    indexes: await db.query(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename IN ('passage_postings', 'document_postings') ORDER BY 1, 2`),
  };
}

const lexical = (mode: 'LEXICAL' | 'LEXICAL_DOCUMENTS', questionText: string) => textSearch({ mode, questionText, exact: true });

const QUESTIONS = ['Which river flows past the castle?', 'capital museum', 'railway bridge to the island', 'mountain festival market'];

async function rankings(db: Database): Promise<[number, number][][]> {
  const out: [number, number][][] = [];
  for (const q of QUESTIONS) {
    out.push((await search(db, lexical('LEXICAL', q))).passages.map((p): [number, number] => [p.passageId, p.score]));
    out.push((await search(db, lexical('LEXICAL_DOCUMENTS', q))).documents.map((d): [number, number] => [d.documentId, d.score]));
  }
  return out;
}

describe('rebuildBm25: the set-based rebuild equals what the triggers maintain', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
    // A history for the triggers: ingest, delete, re-ingest under the same keys, more ingest.
    await ingestDocuments(t.db, corpus(5, 24), DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
    await t.db.query(`DELETE FROM documents WHERE key IN ('d1', 'd8')`);
    await ingestDocuments(t.db, corpus(9, 24).slice(3, 7), DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
    await ingestDocuments(t.db, corpus(13, 6, 'e'), DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
  });
  afterAll(() => t.drop());

  it('writes the same postings, lengths, frequencies and statistics, and indexes what lacked a vector', async () => {
    const before = await snapshot(t.db);
    const rankedBefore = await rankings(t.db);
    expect(before.passagePostings.length).toBeGreaterThan(100);
    // Passages of two documents lose their vector (their postings go with them, by trigger):
    // the rebuild's full-text step must give them back.
    const [{ n: cleared }] = await t.db.query<{ n: number }>(
      `WITH c AS (UPDATE passages SET search = NULL WHERE document_id IN (SELECT id FROM documents WHERE key IN ('d2', 'e3')) RETURNING 1)
       SELECT count(*)::int AS n FROM c`,
    );
    expect(cleared).toBeGreaterThan(0);
    expect((await snapshot(t.db)).passagePostings.length).toBeLessThan(before.passagePostings.length);

    const result = await rebuildBm25(t.db);

    expect(result.indexed).toBe(cleared);
    // The new tables keep the lexeme columns' byte-wise collation (migration 0020), as their indexes.
    const collations = await t.db.query<{ t: string; collname: string }>(
      `SELECT a.attrelid::regclass::text AS t, c.collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
       WHERE a.attname = 'lexeme' AND a.attrelid IN ('passage_postings'::regclass, 'document_postings'::regclass, 'bm25_terms'::regclass)
         AND NOT a.attisdropped ORDER BY 1`,
    );
    expect(collations).toEqual(['bm25_terms', 'document_postings', 'passage_postings'].map((name) => ({ t: name, collname: 'C' })));
    expect(await snapshot(t.db)).toEqual(before);
    expect(result).toMatchObject({
      passages: before.stats.find((s) => s.level === 'p')!.items,
      documents: before.stats.find((s) => s.level === 'd')!.items,
      passagePostings: before.passagePostings.length,
      documentPostings: before.documentPostings.length,
      terms: before.terms.length,
    });
    // The same items in the same order; scores equal up to float summation order (the heap's row order changed).
    const rankedAfter = await rankings(t.db);
    expect(rankedAfter.map((list) => list.map(([id]) => id))).toEqual(rankedBefore.map((list) => list.map(([id]) => id)));
    rankedAfter.forEach((list, i) => list.forEach(([, score], j) => expect(score).toBeCloseTo(rankedBefore[i][j][1], 9)));
  });

  it('computes impact from the final average lengths', async () => {
    await rebuildBm25(t.db);
    const stats = new Map(
      (
        await t.db.query<{ level: string; items: number; total_length: number; total_summary: number }>(
          'SELECT level, items::int, total_length, total_summary FROM bm25_stats',
        )
      ).map((s) => [s.level, s]),
    );
    const saturate = (tf: number, length: number, avgdl: number) => tf / (tf + 1.2 * (0.25 + (0.75 * length) / Math.max(avgdl, 1)));
    const p = stats.get('p')!;
    const passageAvg = p.total_length / p.items;
    for (const r of await t.db.query<{ tf: number; length: number; impact: number }>('SELECT tf, length, impact FROM passage_postings')) {
      expect(r.impact).toBeCloseTo(saturate(r.tf, r.length, passageAvg), 6);
    }
    const d = stats.get('d')!;
    const documentAvg = (d.total_length + d.total_summary) / d.items;
    const rows = await t.db.query<{ tf_body: number; tf_summary: number; length_body: number; length_summary: number; impact: number }>(
      'SELECT tf_body, tf_summary, length_body, length_summary, impact FROM document_postings',
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.impact).toBeCloseTo(saturate(r.tf_body + r.tf_summary, r.length_body + r.length_summary, documentAvg), 6);
    }
  });

  it('leaves the triggers on: a later ingest and delete are counted as before', async () => {
    await rebuildBm25(t.db);
    await ingestDocuments(t.db, corpus(21, 3, 'f'), DEFAULT_INGEST_OPTIONS);
    await indexLexical(t.db);
    await t.db.query(`DELETE FROM documents WHERE key = 'd4'`);
    const maintained = await snapshot(t.db);
    // Rebuilding what the triggers just maintained changes nothing.
    await rebuildBm25(t.db);
    expect(await snapshot(t.db)).toEqual(maintained);
    const [{ n }] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM passage_postings pp JOIN documents d ON d.id = pp.document_id WHERE d.key LIKE 'f%'`,
    );
    expect(n).toBeGreaterThan(0);
  });

  it('rebuilds an empty store to empty statistics', async () => {
    const empty = await createTestDatabase();
    try {
      const result = await rebuildBm25(empty.db);
      expect(result).toEqual({ indexed: 0, passages: 0, documents: 0, passagePostings: 0, documentPostings: 0, terms: 0 });
      expect(await empty.db.query('SELECT level, items::int, total_length, total_summary FROM bm25_stats ORDER BY level')).toEqual([
        { level: 'd', items: 0, total_length: 0, total_summary: 0 },
        { level: 'p', items: 0, total_length: 0, total_summary: 0 },
      ]);
    } finally {
      await empty.drop();
    }
  });
});
