/**
 * The bulk ingest path against today's per-document path with its triggers: the same
 * history of ingests — new documents, re-ingests with changed text and titles, unchanged ones, a
 * key twice in one call, a bad document, a document whose text has no lexeme, links to earlier,
 * later and re-titled documents — run through each path in its own fresh database. Every BM25
 * row (impact aside: it depends on the average lengths when a posting was written), the exact
 * BM25 rankings, the rows, links and pending records must be equal, compared by document key and
 * passage ordinal (ids differ between the two stores).
 */
import type { DocumentInput } from '../src/ingest/types';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingest, type IngestResult } from '../src/pipeline/ingest';
import { search } from '../src/retrieval/search';
import type { Database } from '../src/store/db';
import { prng } from './helpers/prng';
import { storeSnapshot as snapshot } from './helpers/store-snapshot';
import { textSearch } from './helpers/text-search';
import { createTestDatabase, type TestDatabase } from './helpers/database';

const WORDS = ['river', 'capital', 'bridge', 'museum', 'harbour', 'mountain', 'castle', 'railway', 'festival', 'island', 'forest', 'market', 'the', 'of'];

function corpus(seed: number, documents: number, prefix: string, links: (i: number) => string = () => ''): DocumentInput[] {
  const rand = prng(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ') + '.';
  return Array.from({ length: documents }, (_, i) => ({
    key: `${prefix}${i}`,
    title: `Place ${prefix}${i} ${pick()}`,
    abstract: sentence(2 + Math.floor(rand() * 6)) + links(i),
    sections: Array.from({ length: 1 + (i % 3) }, (_, s) => ({
      title: s % 2 === 0 ? pick() : 'Details',
      text: Array.from({ length: 1 + Math.floor(rand() * 4) }, () => sentence(2 + Math.floor(rand() * 12))).join(' '),
      sections: i % 4 === 0 ? [{ title: 'Deeper', text: sentence(5) }] : undefined,
    })),
  }));
}

/** The calls of the history: each is one ingest(). */
function history(): DocumentInput[][] {
  // Links to earlier documents (by key), to later ones in the same call (by key and by title), and to nothing.
  const first = corpus(5, 40, 'a', (i) => ` See [[a${(i + 7) % 40}]] and [[Place a${(i + 3) % 40} ${'x'}|the place]] and [[nowhere${i % 3}]].`);
  const second = [
    // Re-ingests: new text (and so new passages), some with a new title that links resolve to.
    ...corpus(9, 40, 'a', (i) => ` Next to [[Renamed ${i % 5}]].`)
      .slice(0, 12)
      .map((d, i) => (i % 3 === 0 ? { ...d, title: `Renamed ${i}` } : d)),
    // Unchanged.
    ...first.slice(20, 26),
    // New documents, one of them twice (the second wins, written after the first).
    ...corpus(13, 20, 'b', (i) => ` Compare [[a${i}]], [[b${(i + 1) % 20}]] and [[Renamed ${i % 4}]].`),
    { key: 'b3', title: 'Place b3 again', text: 'The castle of the second version. [[a1]]' },
    // Bad input: fails alone.
    { key: 'bad', title: '' },
    // Passages without a lexeme (title path included), a summary with some (a section without text).
    { key: 'stop', title: 'The', sections: [{ title: 'Harbours' }, { title: 'Of', text: 'the of the of and.' }] },
  ];
  const third = [
    ...corpus(17, 18, 'c', (i) => ` Beyond [[The]] and [[b${i}]].`),
    ...corpus(9, 40, 'a').slice(30, 34),
    // A re-ingest that leaves no lexeme in any passage, only in the summary.
    { key: 'a35', title: 'Of', sections: [{ title: 'Bridges' }, { title: 'And', text: 'the of and.' }] },
  ];
  return [first, second, third];
}

const QUESTIONS = ['Which river flows past the castle?', 'capital museum', 'railway bridge to the island', 'mountain festival market', 'renamed place'];

/**
 * Exact BM25 rankings at both levels, by key and ordinal, scores included to 12 digits: the
 * statistics are equal, but a score sums its terms in the order the rows are read, which the
 * stores' differing ids change in the last bit. Ties are ordered by key for the same reason.
 */
async function rankings(db: Database): Promise<unknown[]> {
  const keys = new Map((await db.query<{ id: number; key: string }>('SELECT id, key FROM documents')).map((r) => [r.id, r.key]));
  const ordinals = new Map((await db.query<{ id: number; ordinal: number }>('SELECT id, ordinal FROM passages')).map((r) => [r.id, r.ordinal]));
  const out: unknown[] = [];
  for (const q of QUESTIONS) {
    const p = await search(db, textSearch({ mode: 'LEXICAL', questionText: q, exact: true }));
    out.push(ranked(p.passages.map((x) => [`${keys.get(x.documentId)}#${ordinals.get(x.passageId)}`, x.score])));
    const d = await search(db, textSearch({ mode: 'LEXICAL_DOCUMENTS', questionText: q, exact: true }));
    out.push(ranked(d.documents.map((x) => [keys.get(x.documentId)!, x.score])));
  }
  return out;
}

const ranked = (items: [string, number][]) =>
  items.map(([k, score]) => [k, Number(score.toPrecision(12))] as const).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));

const outcomeShape = (r: IngestResult) => r.outcomes.map((o) => [o.index, o.key, o.status, o.passages, o.message === null]);

describe('bulk ingest gives what the per-document path and its triggers give', () => {
  let perDocument: TestDatabase;
  let bulk: TestDatabase;
  const results: { perDocument: IngestResult[]; bulk: IngestResult[] } = { perDocument: [], bulk: [] };

  beforeAll(async () => {
    perDocument = await createTestDatabase();
    bulk = await createTestDatabase();
    for (const call of history()) {
      results.perDocument.push(await ingest(perDocument.db, call, { ...DEFAULT_INGEST_OPTIONS, bulk: false }));
      // Small batches: many batch transactions, a key twice in one call, several in flight on PostgreSQL.
      results.bulk.push(await ingest(bulk.db, call, { ...DEFAULT_INGEST_OPTIONS, bulk: true, batchPassages: 25 }));
    }
  }, 300_000);
  afterAll(async () => {
    await perDocument?.drop();
    await bulk?.drop();
  });

  it('reports the same outcome for every document of every call', () => {
    expect(results.bulk.map(outcomeShape)).toEqual(results.perDocument.map(outcomeShape));
    const second = results.bulk[1];
    expect(second).toMatchObject({ updated: 12 + 1, unchanged: 6, failed: 1 });
    expect(second.outcomes.find((o) => o.key === 'bad')!.message).toMatch(/title/);
    // Every written passage got its full-text vector in the write.
    for (const [i, r] of results.bulk.entries()) expect(r.indexed).toBe(results.perDocument[i].indexed);
  });

  it('leaves identical BM25 postings, statistics, rows, links and pending records', async () => {
    const expected = await snapshot(perDocument.db);
    const actual = await snapshot(bulk.db);
    // The history exercises what it claims to.
    expect((expected.passagePostings as unknown[]).length).toBeGreaterThan(500);
    expect((expected.links as { resolved: string | null }[]).filter((l) => l.resolved !== null).length).toBeGreaterThan(50);
    expect((expected.links as { resolved: string | null }[]).filter((l) => l.resolved === null).length).toBeGreaterThan(5);
    expect(expected.pending.length).toBe(expected.documents.length);
    // Documents whose summary alone has lexemes are counted.
    expect((expected.lengths as { key: string; length_body: number }[]).filter((l) => ['stop', 'a35'].includes(l.key))).toEqual([
      { key: 'a35', length_body: 0, length_summary: 1 },
      { key: 'stop', length_body: 0, length_summary: 1 },
    ]);
    for (const part of Object.keys(expected)) expect({ [part]: actual[part] }).toEqual({ [part]: expected[part] });
  });

  it('ranks as the per-document path, scores equal to 12 digits', async () => {
    expect(await rankings(bulk.db)).toEqual(await rankings(perDocument.db));
  });

  it("writes impacts by the formula, with one average length for all postings of a document (its batch's)", async () => {
    // impact = tf / (tf + 1.2·(0.25 + 0.75·length/avgdl)): solve for avgdl, posting by posting.
    const rows = await bulk.db.query<{ key: string; tf: number; length: number; impact: number }>(
      `SELECT d.key, pp.tf, pp.length, pp.impact FROM passage_postings pp JOIN documents d ON d.id = pp.document_id`,
    );
    const implied = new Map<string, number[]>();
    for (const r of rows) {
      const avgdl = (0.75 * r.length) / ((r.tf / r.impact - r.tf) / 1.2 - 0.25);
      implied.set(r.key, [...(implied.get(r.key) ?? []), avgdl]);
    }
    const [{ final }] = await bulk.db.query<{ final: number }>(`SELECT sum(total_length) / sum(items) AS final FROM bm25_stats WHERE level = 'p'`);
    expect(implied.size).toBeGreaterThan(50);
    for (const values of implied.values()) {
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      expect((hi - lo) / hi).toBeLessThan(1e-3);
      expect(lo).toBeGreaterThan(1);
      expect(hi).toBeLessThan(final * 3);
    }
  });
});
