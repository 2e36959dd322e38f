import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { search } from '../src/retrieval/search';
import { searchStatement } from '../src/retrieval/sql';
import type { RetrievalMode } from '../src/retrieval/modes';
import type { VectorSearch } from '../src/retrieval/sql';
import type { RetrievalFilter } from '../src/retrieval/types';
import { registerModel, vectorLiteral, type EmbeddingModelRow } from '../src/store/embeddings';
import { ingestDocuments } from '../src/pipeline/ingest';
import { prng } from './helpers/prng';
import { syntheticModel } from './helpers/synthetic-model';
import { createTestDatabase, type TestDatabase } from './helpers/database';

/**
 * Every dense mode against brute force computed here: synthetic unit vectors with real
 * hierarchical structure (documents in clusters, passages near their document), stored under a
 * model registered for the test, all inner products done in JS.
 */

const DIM = 16;

function unit(v: number[]): Float32Array {
  const n = Math.hypot(...v);
  return Float32Array.from(v.map((x) => x / n));
}

function gaussianish(rand: () => number): number {
  return rand() + rand() + rand() - 1.5;
}

function near(center: ArrayLike<number>, spread: number, rand: () => number): Float32Array {
  return unit(Array.from(center, (c) => c + spread * gaussianish(rand)));
}

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

interface Corpus {
  model: EmbeddingModelRow;
  docs: { id: number; source: string; parity: string; vector: Float32Array }[];
  passages: { id: number; documentId: number; vector: Float32Array }[];
}

async function buildCorpus(t: TestDatabase, documents: number, passagesPerDocument: number, seed: number, dim = DIM): Promise<Corpus> {
  const rand = prng(seed);
  const inputs = Array.from({ length: documents }, (_, i) => ({
    key: `d${i}`,
    title: `Doc ${i}`,
    source: i % 3 === 0 ? 'alpha' : 'beta',
    metadata: { parity: i % 2 === 0 ? 'even' : 'odd' },
    sections: Array.from({ length: passagesPerDocument }, (_, s) => ({ title: `S${s}`, text: `Text ${i} ${s}.` })),
  }));
  await ingestDocuments(t.db, inputs, DEFAULT_INGEST_OPTIONS);
  const model = await registerModel(t.db, syntheticModel(`synthetic-${dim}`, dim));
  const clusters = Array.from({ length: 6 }, () => unit(Array.from({ length: dim }, () => gaussianish(rand))));
  const rows = await t.db.query<{ id: number; source: string; parity: string }>(`SELECT id, source, metadata->>'parity' AS parity FROM documents ORDER BY id`);
  const docs = rows.map((r, i) => ({ ...r, vector: near(clusters[i % clusters.length], 0.6, rand) }));
  const prows = await t.db.query<{ id: number; documentId: number }>('SELECT id, document_id AS "documentId" FROM passages ORDER BY id');
  const byId = new Map(docs.map((d) => [d.id, d]));
  const passages = prows.map((p) => ({ ...p, vector: near(byId.get(p.documentId)!.vector, 0.5, rand) }));
  await t.db.query(
    `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding)
     SELECT $1, u.id, d.content_hash, u.v::vector FROM unnest($2::int[], $3::text[]) AS u(id, v) JOIN documents d ON d.id = u.id`,
    [model.id, docs.map((d) => d.id), docs.map((d) => vectorLiteral(d.vector))],
  );
  for (let i = 0; i < passages.length; i += 500) {
    const chunk = passages.slice(i, i + 500);
    await t.db.query(
      `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, u.id, u.doc, u.v::vector FROM unnest($2::int[], $3::int[], $4::text[]) AS u(id, doc, v)`,
      [model.id, chunk.map((p) => p.id), chunk.map((p) => p.documentId), chunk.map((p) => vectorLiteral(p.vector))],
    );
  }
  // As autovacuum would after a bulk load: the planner needs row counts to pick the HNSW index.
  await t.db.exec('ANALYZE');
  return { model, docs, passages };
}

interface Expected {
  passages: { passageId: number; score: number; passageScore: number; documentScore: number | null }[];
  documents: { documentId: number; score: number }[];
}

/** The DHR ranking by brute force. */
function bruteForce(
  c: Corpus,
  mode: RetrievalMode,
  qd: Float32Array,
  qp: Float32Array,
  k1: number,
  k2: number,
  lambda: number,
  keep: (docId: number) => boolean,
): Expected {
  const byScore = <T extends { score: number }>(a: T & { id?: number; passageId?: number; documentId?: number }, b: typeof a) =>
    b.score - a.score || (a.passageId ?? a.documentId ?? 0) - (b.passageId ?? b.documentId ?? 0);
  const docScores = new Map(c.docs.filter((d) => keep(d.id)).map((d) => [d.id, dot(qd, d.vector)]));
  const topDocs = [...docScores]
    .map(([documentId, score]) => ({ documentId, score }))
    .sort(byScore)
    .slice(0, k1);
  const candidatePassages = c.passages.filter((p) => keep(p.documentId));
  if (mode === 'DOCUMENTS') return { passages: [], documents: topDocs };
  if (mode === 'HIERARCHICAL') {
    const chosen = new Map(topDocs.map((d) => [d.documentId, d.score]));
    const passages = candidatePassages
      .filter((p) => chosen.has(p.documentId))
      .map((p) => {
        const passageScore = dot(qp, p.vector);
        const documentScore = chosen.get(p.documentId)!;
        return { passageId: p.id, passageScore, documentScore, score: passageScore + lambda * documentScore };
      })
      .sort(byScore)
      .slice(0, k2);
    return { passages, documents: topDocs };
  }
  const ranked = candidatePassages
    .map((p) => ({ passageId: p.id, documentId: p.documentId, passageScore: dot(qp, p.vector) }))
    .sort((a, b) => b.passageScore - a.passageScore || a.passageId - b.passageId);
  if (mode === 'FLAT') {
    return { passages: ranked.slice(0, k2).map((p) => ({ ...p, documentScore: null, score: p.passageScore })), documents: [] };
  }
  // PARALLEL: top max(k1, k2) passages, fused with their documents' scores.
  const hits = ranked.slice(0, Math.max(k1, k2));
  const passages = hits
    .map((p) => {
      const documentScore = docScores.get(p.documentId)!;
      return { passageId: p.passageId, passageScore: p.passageScore, documentScore, score: p.passageScore + lambda * documentScore };
    })
    .sort(byScore)
    .slice(0, k2);
  const documents = [...new Set(hits.map((h) => h.documentId))].map((documentId) => ({ documentId, score: docScores.get(documentId)! })).sort(byScore);
  return { passages, documents };
}

function expectSame(actual: Awaited<ReturnType<typeof search>>, expected: Expected) {
  expect(actual.passages.map((p) => p.passageId)).toEqual(expected.passages.map((p) => p.passageId));
  actual.passages.forEach((p, i) => {
    const e = expected.passages[i];
    expect(Math.abs(p.score - e.score)).toBeLessThan(1e-5);
    expect(Math.abs((p.passageScore as number) - e.passageScore)).toBeLessThan(1e-5);
    if (e.documentScore === null) expect(p.documentScore).toBeNull();
    else expect(Math.abs((p.documentScore as number) - e.documentScore)).toBeLessThan(1e-5);
  });
  expect(actual.documents.map((d) => d.documentId)).toEqual(expected.documents.map((d) => d.documentId));
  actual.documents.forEach((d, i) => expect(Math.abs(d.score - expected.documents[i].score)).toBeLessThan(1e-5));
}

describe('retrieval SQL against brute force', () => {
  let t: TestDatabase;
  let c: Corpus;
  const rand = prng(99);
  const question = () => unit(Array.from({ length: DIM }, () => gaussianish(rand)));
  const base = (over: Partial<VectorSearch>): VectorSearch => ({
    mode: 'HIERARCHICAL',
    documentModel: c.model,
    passageModel: c.model,
    k1: 5,
    k2: 10,
    lambda: 1,
    ...over,
  });

  beforeAll(async () => {
    t = await createTestDatabase();
    c = await buildCorpus(t, 60, 6, 7);
  });
  afterAll(() => t.drop());

  for (const mode of ['HIERARCHICAL', 'PARALLEL', 'FLAT', 'DOCUMENTS'] as const) {
    for (const exact of [true, false]) {
      it(`${mode} (${exact ? 'exact' : 'HNSW'}) returns the brute-force passages, order and scores`, async () => {
        for (const [k1, k2, lambda] of [
          [5, 10, 1],
          [3, 50, 0.5],
          [20, 7, 0],
          [1, 1, 2],
        ]) {
          const qd = question();
          const qp = question();
          const actual = await search(t.db, base({ mode, k1, k2, lambda, questionForDocuments: qd, questionForPassages: qp, exact }));
          expectSame(
            actual,
            bruteForce(c, mode, qd, qp, k1, k2, lambda, () => true),
          );
        }
      });
    }
  }

  it('perDocument keeps the best candidates of each document, at most that many, in the brute-force order', async () => {
    const documentOf = new Map(c.passages.map((p) => [p.id, p.documentId]));
    for (const mode of ['HIERARCHICAL', 'PARALLEL', 'FLAT'] as const) {
      for (const perDocument of [1, 2]) {
        // a question near one document, so that its passages crowd the top and the bound matters
        const qd = near(c.docs[(perDocument * 7) % c.docs.length].vector, 0.2, rand);
        const qp = qd;
        // the bound applies to the mode's candidates: every passage of the k1 documents
        // (HIERARCHICAL), the top max(k1, k2) passages (PARALLEL, FLAT: k2 = 8 here)
        const all = bruteForce(c, mode, qd, qp, 6, mode === 'HIERARCHICAL' ? 10_000 : 8, 1, () => true);
        const taken = new Map<number, number>();
        const bounded = all.passages.filter((p) => {
          const doc = documentOf.get(p.passageId)!;
          taken.set(doc, (taken.get(doc) ?? 0) + 1);
          return taken.get(doc)! <= perDocument;
        });
        const actual = await search(t.db, base({ mode, k1: 6, k2: 8, perDocument, questionForDocuments: qd, questionForPassages: qp, exact: true }));
        expectSame(actual, { passages: bounded.slice(0, 8), documents: all.documents });
        expect(bounded.slice(0, 8)).not.toEqual(all.passages.slice(0, 8));
      }
    }
  });

  it('perDocumentDecay lowers each further passage of a document by the decay per place, then ranks by that score (with and without perDocument)', async () => {
    const documentOf = new Map(c.passages.map((p) => [p.id, p.documentId]));
    const decayed = (passages: Expected['passages'], decay: number, perDocument = Infinity) => {
      const taken = new Map<number, number>();
      return passages
        .map((p) => {
          const doc = documentOf.get(p.passageId)!;
          const n = (taken.get(doc) ?? 0) + 1;
          taken.set(doc, n);
          return { ...p, n, score: p.score - decay * (n - 1) };
        })
        .filter((p) => p.n <= perDocument)
        .sort((a, b) => b.score - a.score || a.passageId - b.passageId);
    };
    // k2 = 8 > k1 documents: every candidate may reach the top; k2 = 3: only those at or above the
    // third document's best can (the statement sorts only those), and the ranking must not change
    const changed = new Set<number>();
    for (const [decay, perDocument, k2] of [
      [0.05, undefined, 8],
      [0.3, undefined, 8],
      [0.05, 2, 8],
      [0.05, undefined, 3],
      [0.3, undefined, 3],
      [0.05, 1, 3],
    ] as const) {
      const qd = near(c.docs[11].vector, 0.2, rand);
      const all = bruteForce(c, 'HIERARCHICAL', qd, qd, 6, 10_000, 1, () => true);
      const expected = decayed(all.passages, decay, perDocument).slice(0, k2);
      const actual = await search(
        t.db,
        base({ k1: 6, k2, perDocument, perDocumentDecay: decay, questionForDocuments: qd, questionForPassages: qd, exact: true }),
      );
      expectSame(actual, { passages: expected, documents: all.documents });
      // the question sits near one document, so its passages crowd the undecayed top k2
      if (
        expected.map((p) => p.passageId).join() !==
        all.passages
          .slice(0, k2)
          .map((p) => p.passageId)
          .join()
      )
        changed.add(k2);
    }
    // at both sizes the decay changed some ranking, so the comparisons above could fail
    expect([...changed].sort()).toEqual([3, 8]);
  });

  it('withoutPassages leaves passages out before the bound and its decay, as if they were not ranked', async () => {
    const documentOf = new Map(c.passages.map((p) => [p.id, p.documentId]));
    const qd = near(c.docs[17].vector, 0.2, rand);
    const all = bruteForce(c, 'HIERARCHICAL', qd, qd, 6, 10_000, 1, () => true);
    // the best passage of the best document, and one more of it: their document's next passage
    // takes the first place (no decay, not dropped by a bound of one)
    const top = all.passages[0];
    const left = all.passages
      .filter((p) => documentOf.get(p.passageId) === documentOf.get(top.passageId))
      .slice(0, 2)
      .map((p) => p.passageId);
    const rest = all.passages.filter((p) => !left.includes(p.passageId));
    for (const [decay, perDocument] of [
      [0.3, undefined],
      [0, 1],
      [0.05, 2],
    ] as const) {
      const taken = new Map<number, number>();
      const expected = rest
        .map((p) => {
          const doc = documentOf.get(p.passageId)!;
          const n = (taken.get(doc) ?? 0) + 1;
          taken.set(doc, n);
          return { ...p, n, score: p.score - decay * (n - 1) };
        })
        .filter((p) => p.n <= (perDocument ?? Infinity))
        .sort((a, b) => b.score - a.score || a.passageId - b.passageId)
        .slice(0, 8);
      const actual = await search(
        t.db,
        base({ k1: 6, k2: 8, perDocument, perDocumentDecay: decay, withoutPassages: left, questionForDocuments: qd, questionForPassages: qd, exact: true }),
      );
      expectSame(actual, { passages: expected, documents: all.documents });
      // the left-out passages' document still has a passage in the list, at its first place's score
      const third = rest.find((p) => documentOf.get(p.passageId) === documentOf.get(top.passageId))!;
      expect(actual.passages.find((p) => p.passageId === third.passageId)?.score).toBeCloseTo(third.score, 6);
    }
  });

  it('returns exactly min(k2, candidates): all passages of the k1 documents when k2 is larger', async () => {
    const qd = question();
    const qp = question();
    const result = await search(t.db, base({ k1: 3, k2: 1000, questionForDocuments: qd, questionForPassages: qp }));
    expect(result.passages).toHaveLength(3 * 6);
    expect(result.documents).toHaveLength(3);
  });

  it.each<[string, RetrievalFilter, (id: number) => boolean]>([
    ['sources', { sources: ['alpha'] }, (id) => c.docs.find((d) => d.id === id)!.source === 'alpha'],
    ['metadata', { metadata: { parity: 'odd' } }, (id) => c.docs.find((d) => d.id === id)!.parity === 'odd'],
    ['document ids', { documentIds: [] as number[] }, () => false],
  ])('applies a %s filter inside the SQL: exact paths equal brute force, HNSW paths still return k results', async (_name, filter, keep) => {
    if (filter.documentIds) {
      filter.documentIds = c.docs.filter((_, i) => i % 7 === 0).map((d) => d.id);
      const chosen = new Set(filter.documentIds);
      keep = (id) => chosen.has(id);
    }
    for (const mode of ['HIERARCHICAL', 'PARALLEL', 'FLAT', 'DOCUMENTS'] as const) {
      const qd = question();
      const qp = question();
      const expected = bruteForce(c, mode, qd, qp, 4, 12, 1, keep);
      expectSame(await search(t.db, base({ mode, k1: 4, k2: 12, filter, questionForDocuments: qd, questionForPassages: qp, exact: true })), expected);
      // HNSW filters after the index scan; iterative scans keep going until enough rows pass.
      const ann = await search(t.db, base({ mode, k1: 4, k2: 12, filter, questionForDocuments: qd, questionForPassages: qp }));
      expect(ann.passages).toHaveLength(expected.passages.length);
      expect(ann.documents).toHaveLength(expected.documents.length);
      for (const p of ann.passages) expect(keep(p.documentId)).toBe(true);
      for (const d of ann.documents) expect(keep(d.documentId)).toBe(true);
      // relaxed_order may emit index rows out of order; the results still come sorted, and as many.
      const relaxed = await search(
        t.db,
        base({ mode, k1: 4, k2: 12, filter, questionForDocuments: qd, questionForPassages: qp, iterativeScan: 'relaxed_order' }),
      );
      expect(relaxed.passages).toHaveLength(expected.passages.length);
      expect(relaxed.documents).toHaveLength(expected.documents.length);
      for (const p of relaxed.passages) expect(keep(p.documentId)).toBe(true);
      const scores = relaxed.passages.map((p) => p.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    }
  });
});

describe('HNSW recall on a few thousand vectors', () => {
  let t: TestDatabase;
  let c: Corpus;
  beforeAll(async () => {
    t = await createTestDatabase();
    c = await buildCorpus(t, 400, 8, 11, 32);
  });
  afterAll(() => t.drop());

  it('FLAT and HIERARCHICAL through HNSW find ≥ 0.95 of the exact top-20', async () => {
    const rand = prng(5);
    let flat = 0;
    let hierarchical = 0;
    const queries = 20;
    for (let i = 0; i < queries; i++) {
      const qd = unit(Array.from({ length: 32 }, () => gaussianish(rand)));
      const qp = unit(Array.from({ length: 32 }, () => gaussianish(rand)));
      for (const mode of ['FLAT', 'HIERARCHICAL'] as const) {
        const s: VectorSearch = {
          mode,
          documentModel: c.model,
          passageModel: c.model,
          questionForDocuments: qd,
          questionForPassages: qp,
          k1: 20,
          k2: 20,
          lambda: 1,
          efSearch: 40,
        };
        const ann = await search(t.db, s);
        const exact = await search(t.db, { ...s, exact: true });
        expect(ann.passages).toHaveLength(20);
        const truth = new Set(exact.passages.map((p) => p.passageId));
        const hit = ann.passages.filter((p) => truth.has(p.passageId)).length / 20;
        if (mode === 'FLAT') flat += hit;
        else hierarchical += hit;
      }
    }
    expect(c.passages).toHaveLength(3200);
    expect(flat / queries).toBeGreaterThanOrEqual(0.95);
    expect(hierarchical / queries).toBeGreaterThanOrEqual(0.95);
  });

  it('plans HIERARCHICAL as HNSW over documents, then the B-tree on (model, document) for their passages', async () => {
    const rand = prng(8);
    const q = unit(Array.from({ length: 32 }, () => gaussianish(rand)));
    const statement = searchStatement({
      mode: 'HIERARCHICAL',
      documentModel: c.model,
      passageModel: c.model,
      questionForDocuments: q,
      questionForPassages: q,
      k1: 10,
      k2: 20,
      lambda: 1,
    });
    const plan = await t.db.transaction(async (tx) => {
      for (const [name, value] of Object.entries(statement.settings)) await tx.query('SELECT set_config($1, $2, true)', [name, value]);
      // 400 documents are cheaper to sort than to search; what matters is that the index applies.
      await tx.query('SET LOCAL enable_seqscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      await tx.query('SET LOCAL enable_sort = off');
      return (await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, statement.params)).map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(new RegExp(`Index Scan using document_embeddings_hnsw_m${c.model.id}`));
    expect(plan).toMatch(/passage_embeddings_document_idx|passage_embeddings_pkey/);
    expect(plan).not.toMatch(/Seq Scan on passage_embeddings/);
  });
});
