import { ingest } from '../../src/pipeline/ingest';
import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { MODES, modeDefaults, type RetrievalMode } from '../../src/retrieval/modes';
import { search } from '../../src/retrieval/search';
import { searchStatement, type VectorSearch } from '../../src/retrieval/sql';
import type { Database } from '../../src/store/db';
import { registerModel, vectorLiteral, type EmbeddingModelRow } from '../../src/store/embeddings';
import { vectorArrayLiteral } from '../../src/store/vector';
import { createCitusDatabase, createSingleDatabase, type CitusTestDatabase } from '../helpers/citus';
import { prng } from '../helpers/prng';
import { syntheticModel } from '../helpers/synthetic-model';

/**
 * Every retrieval mode on Citus (coordinator + workers, 32 shards) against the same corpus on one
 * PostgreSQL server: with exact: true the rankings and scores are the same; with HNSW, recall@20
 * against Citus's exact ranking is at least 0.98. The corpus has real text (BM25 at both levels)
 * and clustered synthetic vectors, written in the same order to both stores so ids agree.
 */

const DIM = 16;
const DOCS = 80;
const PASSAGES = 5;
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
  'tariff',
  'comet',
];

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
};

interface Store {
  db: Database;
  model: EmbeddingModelRow;
}

function corpus(seed: number) {
  const rand = prng(seed);
  const word = () => WORDS[Math.floor(rand() * rand() * WORDS.length)];
  const text = (n: number) => Array.from({ length: n }, word).join(' ');
  const clusters = Array.from({ length: 6 }, () => unit(Array.from({ length: DIM }, () => rand() - 0.5)));
  const near = (c: Float32Array, spread: number) => unit(Array.from(c, (x) => x + spread * (rand() + rand() - 1)));
  return Array.from({ length: DOCS }, (_, i) => {
    const vector = near(clusters[i % clusters.length], 0.6);
    return {
      input: {
        key: `doc-${i}`,
        title: `${word()} ${word()} ${i}`,
        source: i % 3 === 0 ? 'alpha' : 'beta',
        sections: Array.from({ length: PASSAGES }, (_, s) => ({ title: word(), text: `${text(8 + (s % 4) * 5)}.` })),
      },
      vector,
      passages: Array.from({ length: PASSAGES }, () => near(vector, 0.5)),
    };
  });
}

async function load(db: Database, docs: ReturnType<typeof corpus>): Promise<Store> {
  // One document at a time, so both stores draw the same ids in the same order.
  for (const d of docs) await ingest(db, [d.input], { ...DEFAULT_INGEST_OPTIONS, concurrency: 1 });
  const model = await registerModel(db, syntheticModel(`synthetic-${DIM}`, DIM));
  const keys = docs.map((d) => d.input.key);
  await db.query(
    `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding)
     SELECT $1, d.id, d.content_hash, u.v::vector FROM unnest($2::text[], $3::text[]) AS u(key, v) JOIN documents d ON d.key = u.key`,
    [model.id, keys, docs.map((d) => vectorLiteral(d.vector))],
  );
  // Several summary vectors for every other document, derived from its vector so both stores agree.
  const pieces = (v: Float32Array) => [unit(Array.from(v, (x, i) => (i % 2 ? x : -x))), unit(Array.from(v).reverse())];
  const withPieces = docs.filter((_, i) => i % 2 === 0);
  for (const d of withPieces) {
    // one row each, by its distribution column: a router query on Citus
    const [{ id }] = await db.query<{ id: number }>('SELECT id FROM documents WHERE key = $1', [d.input.key]);
    await db.query('UPDATE document_embeddings SET summary_pieces = $3::vector[] WHERE model_id = $1 AND document_id = $2', [
      model.id,
      id,
      vectorArrayLiteral(pieces(d.vector)),
    ]);
  }
  const pk = docs.flatMap((d) => d.passages.map(() => d.input.key));
  const po = docs.flatMap((d) => d.passages.map((_, i) => i));
  const pv = docs.flatMap((d) => d.passages.map((v) => vectorLiteral(v)));
  await db.query(
    `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
     SELECT $1, p.id, p.document_id, u.v::vector
     FROM unnest($2::text[], $3::int[], $4::text[]) AS u(key, ordinal, v)
     JOIN documents d ON d.key = u.key JOIN passages p ON p.document_id = d.id AND p.ordinal = u.ordinal`,
    [model.id, pk, po, pv],
  );
  await db.exec('ANALYZE');
  return { db, model };
}

describe('Citus: every mode answers as on one server', () => {
  let citus: CitusTestDatabase;
  let single: { db: Database; drop(): Promise<void> };
  let c: Store;
  let s: Store;
  const rand = prng(41);
  const questions = Array.from({ length: 6 }, () => ({
    qd: unit(Array.from({ length: DIM }, () => rand() - 0.5)),
    qp: unit(Array.from({ length: DIM }, () => rand() - 0.5)),
    text: `${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]} of the ${WORDS[Math.floor(rand() * 6)]}`,
  }));
  const input = (store: Store, mode: RetrievalMode, q: (typeof questions)[number], exact: boolean, over: Partial<VectorSearch> = {}): VectorSearch => ({
    mode,
    documentModel: store.model,
    passageModel: store.model,
    questionForDocuments: q.qd,
    questionForPassages: q.qp,
    questionText: q.text,
    k1: 8,
    k2: 20,
    ...modeDefaults(mode),
    exact,
    ...over,
  });

  beforeAll(async () => {
    const docs = corpus(5);
    [citus, single] = await Promise.all([createCitusDatabase(), createSingleDatabase()]);
    c = await load(citus.db, docs);
    s = await load(single.db, docs);
  });
  afterAll(async () => {
    await citus?.drop();
    await single?.drop();
  });

  it('stores the title tree distributed by document over every worker', async () => {
    const rows = await citus.db.query<{ nodes: number; shards: number }>(
      `SELECT count(DISTINCT nodename || nodeport)::int AS nodes, count(*)::int AS shards FROM citus_shards WHERE table_name = 'passages'::regclass`,
    );
    expect(rows[0].nodes).toBe(citus.workers.length);
    expect(rows[0].nodes).toBeGreaterThanOrEqual(2);
    const [ids] = await citus.db.query<{ d: number; p: number }>(
      'SELECT (SELECT count(*)::int FROM documents) AS d, (SELECT count(*)::int FROM passages) AS p',
    );
    expect(ids).toEqual({ d: DOCS, p: DOCS * PASSAGES });
  });

  it("a search's HNSW settings reach every shard, not only the coordinator", async () => {
    // As a session setting, hnsw.ef_search stayed on the coordinator: every shard's stage-1 scan ran
    // at pgvector's default of 40 and returned at most 40 documents, whatever k1 (bench:citus).
    const { settings } = searchStatement({ ...input(c, 'HIERARCHICAL', questions[0], false), k1: 300, distributed: true });
    expect(Number(settings['hnsw.ef_search'])).toBeGreaterThan(40);
    const seen = await citus.db.queryWithSettings<{ ef: string | null; n: number }>(
      settings,
      `SELECT current_setting('hnsw.ef_search', true) AS ef, count(*)::int AS n FROM passages GROUP BY 1`,
    );
    expect(seen).toEqual([{ ef: settings['hnsw.ef_search'], n: DOCS * PASSAGES }]);
    // Local to that statement's transaction: a plain query afterwards sees none of it.
    const after = await citus.db.query<{ ef: string | null }>(`SELECT DISTINCT current_setting('hnsw.ef_search', true) AS ef FROM passages`);
    expect(after.map((r) => r.ef)).not.toContain(settings['hnsw.ef_search']);
  });

  for (const mode of Object.keys(MODES) as RetrievalMode[]) {
    it(`${mode}, exact: the same passages, documents and scores as one server`, async () => {
      for (const q of questions) {
        const overs: Partial<VectorSearch>[] = [{}, { filter: { sources: ['alpha'] } }, { k1: 3, k2: 7, lambda: 0.5 }, { k1: 4, k2: 9, perDocument: 1 }];
        // HYBRID_HIERARCHICAL's other document stages: several summary vectors, scores from passages
        if (mode === 'HYBRID_HIERARCHICAL') {
          overs.push(
            { summaryPieces: true },
            { summaryPieces: true, summaryShare: 0.5, documentPassages: 'top3' },
            { summaryShare: 0, documentPassages: 'centroid' },
          );
          // stage 2 under a passage budget (Citus counts a document's passages by a grouped join)
          overs.push({ k1: 6, passageBudget: 10 }, { passageBudget: 1 });
        }
        for (const over of overs) {
          const a = await search(c.db, input(c, mode, q, true, over));
          const b = await search(s.db, input(s, mode, q, true, over));
          expect(a.passages.map((p) => p.passageId)).toEqual(b.passages.map((p) => p.passageId));
          expect(a.documents.map((d) => d.documentId)).toEqual(b.documents.map((d) => d.documentId));
          a.passages.forEach((p, i) => expect(p.score).toBeCloseTo(b.passages[i].score, 9));
          a.documents.forEach((d, i) => expect(d.score).toBeCloseTo(b.documents[i].score, 9));
          expect(a.questionTerms).toBe(b.questionTerms);
          if (!MODES[mode].documentsOnly) expect(a.passages.length).toBeGreaterThan(0);
        }
      }
    });

    it(`${mode}, HNSW: recall@20 >= 0.98 against the exact ranking`, async () => {
      let found = 0;
      let wanted = 0;
      for (const q of questions) {
        const exact = await search(c.db, input(c, mode, q, true));
        const approx = await search(c.db, input(c, mode, q, false));
        const key = MODES[mode].documentsOnly ? 'documents' : 'passages';
        const ids = (r: typeof exact) => (key === 'documents' ? r.documents.map((d) => d.documentId) : r.passages.map((p) => p.passageId)).slice(0, 20);
        const truth = new Set(ids(exact));
        found += ids(approx).filter((id) => truth.has(id)).length;
        wanted += truth.size;
      }
      expect(wanted).toBeGreaterThan(0);
      expect(found / wanted).toBeGreaterThanOrEqual(0.98);
    });
  }

  it('BM25 statistics are corpus-wide: kept per shard group, summed when ranking', async () => {
    // Per shard group: several groups hold passages, none holds them all...
    const groups = await citus.db.query<{ items: number }>("SELECT items::int AS items FROM bm25_stats WHERE level = 'p' AND items > 0");
    expect(groups.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...groups.map((g) => g.items))).toBeLessThan(DOCS * PASSAGES);
    // ...and their sums are the single server's statistics, term by term.
    const sums = (db: Database) =>
      db.query<{ level: string; items: number; total: number; terms: number; df: number }>(
        `SELECT s.level, s.items::int AS items, s.total, t.terms::int AS terms, t.df::int AS df
         FROM (SELECT level, sum(items) AS items, sum(total_length + total_summary) AS total FROM bm25_stats GROUP BY level) s
         JOIN (SELECT level, count(DISTINCT lexeme) AS terms, sum(df) AS df FROM bm25_terms WHERE df > 0 GROUP BY level) t USING (level)
         ORDER BY level`,
      );
    expect(await sums(c.db)).toEqual(await sums(s.db));
    // A shard-local idf would differ from the corpus-wide one for some question term; the scores
    // above match one server to 1e-9, and here the df of one term differs between groups.
    const [spread] = await citus.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM (SELECT lexeme FROM bm25_terms WHERE level = 'p' GROUP BY lexeme HAVING count(DISTINCT df) > 1) x",
    );
    expect(spread.n).toBeGreaterThan(0);
  });
});
