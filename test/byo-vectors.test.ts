/**
 * Bring your own vectors: an external model registered by name and dimension, its
 * document and passage vectors supplied with ingest, question vectors with retrieve; rankings
 * checked against brute force over the same vectors, bad input refused by name with nothing changed.
 */
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingest } from '../src/pipeline/ingest';
import { MODES } from '../src/retrieval/modes';
import { finishPendingStep } from '../src/pipeline/pending';
import { pendingWork } from '../src/store/pending';
import { createTestApi, dataOf, type GraphQLResult, type TestApi } from './helpers/api';
import { prng } from './helpers/prng';

const DIM = 8;
const DOCS = 18; // ≥ 16: the first ingest takes the bulk path; later single documents the per-document one
const WORDS = ['river', 'mountain', 'harbour', 'desert', 'forest', 'glacier', 'valley', 'island'];

const REGISTER = `mutation($name: String!, $dimension: Int!) { registerExternalEmbeddingModel(name: $name, dimension: $dimension) { name dimension runtime roles } }`;
const ACTIVATE = `mutation($model: String!, $roles: [EncoderRole!]) { activateEmbeddingModel(model: $model, roles: $roles) { name roles } }`;
const INGEST = `mutation($docs: [DocumentInput!]!, $model: String) {
  ingestDocuments(documents: $docs, model: $model) { created updated unchanged failed outcomes { status message } embedded { documents passages } }
}`;
const RETRIEVE = `query($q: String, $v: [Float!], $dv: [Float!], $pv: [Float!], $mode: RetrievalMode, $k1: Int, $k2: Int, $lambda: Float, $alpha: Float, $documentAlpha: Float, $exact: Boolean) {
  retrieve(question: $q, questionVector: $v, questionDocumentVector: $dv, questionPassageVector: $pv, mode: $mode, k1: $k1, k2: $k2,
           lambda: $lambda, alpha: $alpha, documentAlpha: $documentAlpha, exact: $exact) {
    mode model warnings
    passages { score passageScore documentScore denseScore lexicalScore passage { ordinal document { key } } answer { text } }
    documents { score document { key } }
    coverage { documents { total embedded } passages { total embedded } }
  }
}`;

const f32 = (v: number[]): number[] => Array.from(Float32Array.from(v));
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
/** Min-max over the candidates; all equal → 0 (the statements' normalization). */
const minMax = (values: number[]): number[] => {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return values.map((v) => (hi > lo ? (v - lo) / (hi - lo) : 0));
};

interface Corpus {
  docs: Record<string, unknown>[];
  /** Per document key: its vector and its passages' vectors in reading order. */
  vectors: Map<string, { document: number[]; passages: number[][] }>;
}

/** Documents with an abstract as passages, a section, and a nested section; vectors made up here. */
function corpus(seed: number, n = DOCS): Corpus {
  const rand = prng(seed);
  const vec = () => f32(Array.from({ length: DIM }, () => rand() * 2 - 1));
  const vectors = new Map<string, { document: number[]; passages: number[][] }>();
  const docs = Array.from({ length: n }, (_, d) => {
    const key = `doc-${d}`;
    const passages: number[][] = [];
    const passage = (label: string) => {
      const vector = vec();
      passages.push(vector);
      return { text: `${label} of document ${d} about the ${WORDS[(d + passages.length) % WORDS.length]}.`, vector };
    };
    const abstract = [passage('Abstract')];
    const first = { title: 'Overview', passages: [passage('First'), passage('Second')] };
    const nested = { title: 'Details', sections: [{ title: 'More', passages: [passage('Nested')] }] };
    const document = vec();
    vectors.set(key, { document, passages });
    return { key, title: `Document ${d}`, vector: document, passages: abstract, sections: [first, nested] };
  });
  return { docs, vectors };
}

/** A copy of a corpus document with other vectors, given in reading order (the corpus's shape). */
function withVectors(doc: Record<string, unknown>, v: { document: number[]; passages: number[][] }): any {
  const d = JSON.parse(JSON.stringify(doc));
  d.vector = v.document;
  d.passages[0].vector = v.passages[0];
  d.sections[0].passages[0].vector = v.passages[1];
  d.sections[0].passages[1].vector = v.passages[2];
  d.sections[1].sections[0].passages[0].vector = v.passages[3];
  return d;
}

/**
 * The stored documents and passages with the corpus's vectors, passages matched by reading order.
 * Identified by document key and ordinal, not by id, so the test does not depend on the ids' form.
 */
async function storedPassages(api: TestApi, c: Corpus) {
  const rows = await api.testDb.db.query<{ key: string; ordinal: number }>(
    'SELECT d.key, p.ordinal FROM passages p JOIN documents d ON d.id = p.document_id ORDER BY p.id',
  );
  const docs = await api.testDb.db.query<{ key: string }>('SELECT key FROM documents ORDER BY id');
  return {
    passages: rows.map((r) => ({ id: `${r.key}:${r.ordinal}`, documentId: r.key, vector: c.vectors.get(r.key)!.passages[r.ordinal] })),
    documents: docs.map((d) => ({ id: d.key, vector: c.vectors.get(d.key)!.document })),
  };
}

interface Ranked {
  id: string;
  score: number;
}

function expectRanking(actual: Ranked[], expected: Ranked[]) {
  expect(actual.map((a) => a.id)).toEqual(expected.map((e) => e.id));
  actual.forEach((a, i) => expect(Math.abs(a.score - expected[i].score)).toBeLessThan(1e-5));
}

const byScore = (a: Ranked, b: Ranked) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The default mode's per-document decay by brute force: a document's n-th best passage loses (n − 1)·decay, then re-ranked. */
function decayed(passages: (Ranked & { documentId: string })[], decay: number): Ranked[] {
  const taken = new Map<string, number>();
  return [...passages]
    .sort(byScore)
    .map((p) => {
      const n = taken.get(p.documentId) ?? 0;
      taken.set(p.documentId, n + 1);
      return { id: p.id, score: p.score - decay * n };
    })
    .sort(byScore);
}
const DECAY = MODES.HYBRID_HIERARCHICAL.defaults.perDocumentDecay;

/** DHR's serial ranking by brute force: top-k1 documents by qd·d, their passages by qp·p + λ·(qd·d). */
function hierarchical(
  s: Awaited<ReturnType<typeof storedPassages>>,
  qd: number[],
  qp: number[],
  k1: number,
  k2: number,
  lambda: number,
  docVectors?: Map<string, number[]>,
) {
  const docs = s.documents
    .map((d) => ({ id: d.id, score: dot(qd, docVectors?.get(d.id) ?? d.vector) }))
    .sort(byScore)
    .slice(0, k1);
  const chosen = new Map(docs.map((d) => [d.id, d.score]));
  const passages = s.passages
    .filter((p) => chosen.has(p.documentId))
    .map((p) => ({ id: p.id, score: dot(qp, p.vector) + lambda * chosen.get(p.documentId)! }))
    .sort(byScore)
    .slice(0, k2);
  return { docs, passages };
}

const ids = (r: any): { passages: Ranked[]; documents: Ranked[] } => ({
  passages: r.passages.map((p: any) => ({ id: `${p.passage.document.key}:${p.passage.ordinal}`, score: p.score })),
  documents: r.documents.map((d: any) => ({ id: d.document.key, score: d.score })),
});

function refusal(result: GraphQLResult, argument: string): string {
  expect(result.errors).toHaveLength(1);
  expect(result.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
  return result.errors![0].message;
}

describe('bring your own vectors: an external model', () => {
  let api: TestApi;
  let c: Corpus;
  const rand = prng(7);
  const question = () => f32(Array.from({ length: DIM }, () => rand() * 2 - 1));
  const counts = async () =>
    (
      await api.testDb.db.query<{ d: number; p: number; de: number; pe: number }>(
        `SELECT (SELECT count(*) FROM documents)::int AS d, (SELECT count(*) FROM passages)::int AS p,
                (SELECT count(*) FROM document_embeddings)::int AS de, (SELECT count(*) FROM passage_embeddings)::int AS pe`,
      )
    )[0];

  beforeAll(async () => {
    api = await createTestApi({}, undefined, { withRegistry: true });
    const model = dataOf(await api.exec(REGISTER, { name: 'byo', dimension: DIM })).registerExternalEmbeddingModel;
    expect(model).toEqual({ name: 'byo', dimension: DIM, runtime: 'external', roles: [] });
    // An empty store: every document is covered, so the model can serve every role at once.
    dataOf(await api.exec(ACTIVATE, { model: 'byo' }));
    c = corpus(1);
    const result = dataOf(await api.exec(INGEST, { docs: c.docs })).ingestDocuments;
    expect(result).toMatchObject({ created: DOCS, failed: 0, embedded: { documents: 0, passages: 0 } });
  });
  afterAll(() => api.close());

  it('stores the caller’s passages whole, in reading order, with their vectors; coverage counts them', async () => {
    const rows = await api.testDb.db.query<{ key: string; ordinal: number; text: string; titlePath: string[]; embedding: string }>(
      `SELECT d.key, p.ordinal, p.text, p.title_path AS "titlePath", e.embedding::text AS embedding
       FROM passages p JOIN documents d ON d.id = p.document_id
       JOIN passage_embeddings e ON e.passage_id = p.id AND e.model_id = (SELECT id FROM embedding_models WHERE name = 'byo')
       WHERE d.key = 'doc-3' ORDER BY p.ordinal`,
    );
    expect(rows.map((r) => r.text.split(' ')[0])).toEqual(['Abstract', 'First', 'Second', 'Nested']);
    expect(rows[3].titlePath).toEqual(['Document 3', 'Details', 'More']);
    rows.forEach((r, k) => expect(f32(JSON.parse(r.embedding))).toEqual(c.vectors.get('doc-3')!.passages[k]));
    const models = dataOf(await api.exec('{ embeddingModels { name runtime roles documents passages } }')).embeddingModels;
    expect(models).toEqual([
      { name: 'byo', runtime: 'external', roles: ['QUESTION_DOCUMENT', 'DOCUMENT', 'QUESTION_PASSAGE', 'PASSAGE'], documents: DOCS, passages: DOCS * 4 },
    ]);
    const [{ pending }] = await api.testDb.db.query<{ pending: number }>('SELECT count(*)::int AS pending FROM pending_documents');
    expect(pending).toBe(0);
  });

  it('HIERARCHICAL and FLAT with questionVector rank as brute force over the same vectors (exact and HNSW)', async () => {
    const s = await storedPassages(api, c);
    for (const exact of [true, false]) {
      for (let trial = 0; trial < 3; trial++) {
        const q = question();
        const [k1, k2, lambda] = [4, 9, 0.5 + trial];
        const h = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'HIERARCHICAL', k1, k2, lambda, exact })).retrieve;
        expect(h).toMatchObject({
          mode: 'HIERARCHICAL',
          model: 'byo',
          coverage: { documents: { total: DOCS, embedded: DOCS }, passages: { total: DOCS * 4, embedded: DOCS * 4 } },
        });
        expect(h.warnings).toEqual([]);
        const expected = hierarchical(s, q, q, k1, k2, lambda);
        expectRanking(ids(h).documents, expected.docs);
        expectRanking(ids(h).passages, expected.passages);
        // no question text: no answer highlight to give
        expect(h.passages[0].answer).toBeNull();

        const flat = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'FLAT', k2: 7, exact })).retrieve;
        const top = s.passages
          .map((p) => ({ id: p.id, score: dot(q, p.vector) }))
          .sort(byScore)
          .slice(0, 7);
        expectRanking(ids(flat).passages, top);
        flat.passages.forEach((p: any) => expect(p.documentScore).toBeNull());
      }
    }
  });

  it('HYBRID_HIERARCHICAL: without text by vectors alone (warned), with text its BM25 side too', async () => {
    const s = await storedPassages(api, c);
    const [k1, k2, lambda, alpha, documentAlpha] = [5, 10, 0.5, 0.7, 0.6];
    const q = question();
    const r = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'HYBRID_HIERARCHICAL', k1, k2, lambda, alpha, documentAlpha, exact: true })).retrieve;
    expect(r.warnings).toEqual([expect.stringContaining('no question text')]);
    // Stage 1: the top k1 by vector, min-max normalized, times documentAlpha (BM25's side is empty: 0).
    const top = s.documents
      .map((d) => ({ id: d.id, score: dot(q, d.vector) }))
      .sort(byScore)
      .slice(0, k1);
    const dn = minMax(top.map((d) => d.score));
    const docs = top.map((d, i) => ({ id: d.id, score: documentAlpha * dn[i] }));
    const chosen = new Map(docs.map((d) => [d.id, d.score]));
    // Stage 2: every passage of those documents, its vector score min-max normalized over them.
    const ps = s.passages.filter((p) => chosen.has(p.documentId));
    const pn = minMax(ps.map((p) => dot(q, p.vector)));
    const expected = decayed(
      ps.map((p, i) => ({ id: p.id, documentId: p.documentId, score: alpha * pn[i] + lambda * chosen.get(p.documentId)! })),
      DECAY,
    ).slice(0, k2);
    expectRanking(ids(r).documents, docs.sort(byScore));
    expectRanking(ids(r).passages, expected);
    r.passages.forEach((p: any) => expect(p.lexicalScore).toBe(0));

    // With text and alpha = documentAlpha = 1 over every document, BM25 scores come back but the
    // ranking is the vectors' alone: min-max over all documents, then over all their passages.
    const t = dataOf(
      await api.exec(RETRIEVE, { q: 'harbour glacier', v: q, mode: 'HYBRID_HIERARCHICAL', k1: DOCS, k2, lambda, alpha: 1, documentAlpha: 1, exact: true }),
    ).retrieve;
    expect(t.warnings).toEqual([]);
    const all = s.documents.map((d) => ({ id: d.id, score: dot(q, d.vector) }));
    const an = minMax(all.map((d) => d.score));
    const docScore = new Map(all.map((d, i) => [d.id, an[i]]));
    const pAll = minMax(s.passages.map((p) => dot(q, p.vector)));
    const expectedT = decayed(
      s.passages.map((p, i) => ({ id: p.id, documentId: p.documentId, score: pAll[i] + lambda * docScore.get(p.documentId)! })),
      DECAY,
    ).slice(0, k2);
    expectRanking(ids(t).passages, expectedT);
    expect(t.passages.some((p: any) => p.lexicalScore > 0)).toBe(true);
    // the text gives highlights: lexical overlap (the external model encodes no sentences)
    expect(t.passages.some((p: any) => p.answer !== null)).toBe(true);
  });

  it('DOCUMENTS, PARALLEL and flat HYBRID take questionVector too (brute force)', async () => {
    const s = await storedPassages(api, c);
    const q = question();
    const [k1, k2, lambda, alpha] = [6, 8, 0.7, 0.4];
    const docScore = new Map(s.documents.map((d) => [d.id, dot(q, d.vector)]));
    const byPassage = s.passages.map((p) => ({ id: p.id, documentId: p.documentId, score: dot(q, p.vector) })).sort(byScore);

    const docs = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'DOCUMENTS', k1, exact: true })).retrieve;
    expectRanking(
      ids(docs).documents,
      [...docScore]
        .map(([id, score]) => ({ id, score }))
        .sort(byScore)
        .slice(0, k1),
    );

    const parallel = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'PARALLEL', k1, k2, lambda, exact: true })).retrieve;
    const fused = byPassage.slice(0, Math.max(k1, k2)).map((p) => ({ id: p.id, score: p.score + lambda * docScore.get(p.documentId)! }));
    expectRanking(ids(parallel).passages, fused.sort(byScore).slice(0, k2));

    // flat hybrid without text: the top max(k1, k2) passages by vector, min-max normalized, times alpha
    const hybrid = dataOf(await api.exec(RETRIEVE, { v: q, mode: 'HYBRID', k1, k2, alpha, exact: true })).retrieve;
    expect(hybrid.warnings).toEqual([expect.stringContaining('no question text')]);
    const top = byPassage.slice(0, Math.max(k1, k2));
    const n = minMax(top.map((p) => p.score));
    expectRanking(
      ids(hybrid).passages,
      top
        .map((p, i) => ({ id: p.id, score: alpha * n[i] }))
        .sort(byScore)
        .slice(0, k2),
    );
  });

  it('a re-ingest with the same text and new vectors is unchanged, and its vectors are replaced', async () => {
    const fresh = corpus(99, 1).vectors.get('doc-0')!;
    const same = withVectors(c.docs[0], fresh);
    const r = dataOf(await api.exec(INGEST, { docs: [same] })).ingestDocuments;
    expect(r).toMatchObject({ unchanged: 1, failed: 0 });
    const stored = await api.testDb.db.query<{ embedding: string }>(
      `SELECT e.embedding::text AS embedding FROM passage_embeddings e JOIN passages p ON p.id = e.passage_id
       JOIN documents d ON d.id = p.document_id WHERE d.key = 'doc-0' ORDER BY p.ordinal`,
    );
    expect(stored.map((row) => f32(JSON.parse(row.embedding)))).toEqual(fresh.passages);
    const [{ embedding }] = await api.testDb.db.query<{ embedding: string }>(
      `SELECT e.embedding::text AS embedding FROM document_embeddings e JOIN documents d ON d.id = e.document_id WHERE d.key = 'doc-0'`,
    );
    expect(f32(JSON.parse(embedding))).toEqual(fresh.document);
    c.vectors.set('doc-0', fresh);
    c.docs[0] = same;
  });

  it('refuses bad vectors at ingest by name, writing nothing', async () => {
    const before = await counts();
    const extra = corpus(5, 2);
    const good = extra.docs.map((d, i) => ({ ...d, key: `new-${i}` })) as any[];
    const clone = () => JSON.parse(JSON.stringify(good));
    const cases: [string, (docs: any[]) => void][] = [
      ['documents[1].sections[0].passages[1].vector', (d) => d[1].sections[0].passages[1].vector.pop()],
      ['documents[1].sections[1].sections[0].passages[0].vector', (d) => delete d[1].sections[1].sections[0].passages[0].vector],
      ['documents[0].vector', (d) => delete d[0].vector],
      ['documents[0].passages[0].vector', (d) => d[0].passages[0].vector.push(0.5)],
      ['documents[1].sections[0].text', (d) => (d[1].sections[0] = { title: 'Plain', text: 'Text the server would split.' })],
      ['documents[0].markdown', (d) => (d[0] = { key: 'md', markdown: '# Title\n\nSome text.', vector: d[0].vector })],
    ];
    for (const [argument, spoil] of cases) {
      const docs = clone();
      spoil(docs);
      const message = refusal(await api.exec(INGEST, { docs }), argument);
      expect(message).toContain(argument);
    }
    // NaN and Infinity cannot travel in JSON variables; a literal too large for a double is Infinity.
    const literal = `mutation { ingestDocuments(documents: [{ key: "inf", title: "Inf", vector: [1e400, 0, 0, 0, 0, 0, 0, 0],
      passages: [{ text: "Some text.", vector: [1, 0, 0, 0, 0, 0, 0, 0] }] }]) { created } }`;
    expect(refusal(await api.exec(literal), 'documents[0].vector')).toMatch(/finite/);
    // 1e39 is a finite double but beyond float4: refused as well
    const big = literal.replace('1e400', '1e39');
    expect(refusal(await api.exec(big), 'documents[0].vector')).toMatch(/float4/);
    // a model that computes its own vectors cannot take them; an unknown one is not found
    const named = await api.exec(INGEST, { docs: clone(), model: 'nope' });
    expect(named.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', argument: 'model' });
    expect(await counts()).toEqual(before);
    // the good batch goes in
    expect(dataOf(await api.exec(INGEST, { docs: clone() })).ingestDocuments).toMatchObject({ created: 2, failed: 0 });
    const after = await counts();
    expect(after).toEqual({ d: before.d + 2, p: before.p + 8, de: before.de + 2, pe: before.pe + 8 });
    good.forEach((d, i) => {
      c.docs.push(d);
      c.vectors.set(d.key, extra.vectors.get(`doc-${i}`)!);
    });
  });

  it('refuses bad question vectors by name', async () => {
    const q = question();
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ v: q.slice(0, 7), mode: 'HIERARCHICAL' }, 'questionVector', /7 numbers.*8-d/],
      [{ v: q, mode: 'LEXICAL' }, 'questionVector', /reads no vectors/],
      [{ v: q, q: 'river', mode: 'LEXICAL_DOCUMENTS' }, 'questionVector', /reads no vectors/],
      [{ q: 'river', mode: 'FLAT' }, 'questionVector', /external/],
      [{ mode: 'FLAT' }, 'question', /questionVector/],
      [{ dv: q, pv: q, mode: 'FLAT' }, 'questionDocumentVector', /no document vectors/],
      [{ pv: q, mode: 'HIERARCHICAL' }, 'questionVector', /is missing/],
      [{ v: [], mode: 'FLAT' }, 'questionVector', /empty/],
    ];
    for (const [variables, argument, message] of cases) expect(refusal(await api.exec(RETRIEVE, variables), argument)).toMatch(message);
    const literal = `{ retrieve(questionVector: [1, 2, 3, 4, 5, 6, 7, 1e400], mode: FLAT) { mode } }`;
    expect(refusal(await api.exec(literal), 'questionVector')).toMatch(/finite/);
    // nor does re-embedding apply to it
    const job = await api.exec(`mutation { reembed(model: "byo") { id } }`);
    expect(job.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'model' });
  });

  it('registration: a bad dimension, or the same name with another one, is refused', async () => {
    expect(refusal(await api.exec(REGISTER, { name: 'zero', dimension: 0 }), 'dimension')).toMatch(/1 to 2000/);
    expect(refusal(await api.exec(REGISTER, { name: ' padded', dimension: 4 }), 'name')).toMatch(/spaces/);
    const again = await api.exec(REGISTER, { name: 'byo', dimension: 16 });
    expect(again.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', argument: 'dimension' });
    expect(dataOf(await api.exec(REGISTER, { name: 'byo', dimension: DIM })).registerExternalEmbeddingModel.dimension).toBe(DIM);
  });

  it('per role: a second external model filled through `model`, activated for the document roles, needs its own question vector', async () => {
    // Every stored document again, same text, with the second model's vectors (both levels).
    const second = corpus(31, c.docs.length);
    const all = c.docs.map((d, i) => withVectors(d, second.vectors.get(`doc-${i}`)!));
    const secondVectors = new Map<string, number[]>(all.map((d: any) => [d.key, d.vector]));
    dataOf(await api.exec(REGISTER, { name: 'byo-doc', dimension: DIM }));
    // not yet covered: activation is refused
    const early = await api.exec(ACTIVATE, { model: 'byo-doc', roles: ['QUESTION_DOCUMENT', 'DOCUMENT'] });
    expect(early.errors?.[0].extensions?.code).toBe('MODEL_INCOMPLETE');
    expect(dataOf(await api.exec(INGEST, { docs: all, model: 'byo-doc' })).ingestDocuments).toMatchObject({ unchanged: all.length, failed: 0 });
    dataOf(await api.exec(ACTIVATE, { model: 'byo-doc', roles: ['QUESTION_DOCUMENT', 'DOCUMENT'] }));
    api.models!.invalidate();

    const qd = question();
    const qp = question();
    expect(refusal(await api.exec(RETRIEVE, { v: qd, mode: 'HIERARCHICAL' }), 'questionDocumentVector')).toMatch(/different models/);
    expect(refusal(await api.exec(RETRIEVE, { dv: qd, mode: 'HIERARCHICAL' }), 'questionPassageVector')).toMatch(/external/);
    // FLAT reads the passage role alone: questionVector serves it
    dataOf(await api.exec(RETRIEVE, { v: qp, mode: 'FLAT' }));

    const s = await storedPassages(api, c);
    const r = dataOf(await api.exec(RETRIEVE, { dv: qd, pv: qp, mode: 'HIERARCHICAL', k1: 5, k2: 8, lambda: 1, exact: true })).retrieve;
    const expected = hierarchical(s, qd, qp, 5, 8, 1, secondVectors);
    expectRanking(ids(r).documents, expected.docs);
    expectRanking(ids(r).passages, expected.passages);
  });

  it('never encodes for an external model: a document written without vectors stays pending, the finisher skips it', async () => {
    // Written past the API's checks (the pipeline without vectorsFor, as a --no-embed load would).
    await ingest(api.testDb.db, [{ key: 'raw', title: 'Raw', abstract: 'Text that came without vectors.' }], { ...DEFAULT_INGEST_OPTIONS });
    const targets = (await api.models!.current({ fresh: true }))!;
    // What the job worker does when idle: nothing to encode, no error, the record stays.
    expect(await finishPendingStep(api.testDb.db, targets, { limit: 8, olderThanSeconds: 0 })).toBe(0);
    expect(await pendingWork(api.testDb.db)).toEqual({ unindexedPassages: 0, unembeddedPassages: 1, unembeddedDocuments: 1 });
    const r = dataOf(await api.exec(RETRIEVE, { v: question(), mode: 'FLAT', k2: 3 })).retrieve;
    expect(r.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^1 of \d+ passages have no vector yet/)]));
  });
});

describe("bring your own vectors: the caller's passages in prepare", () => {
  const long = Array.from({ length: 150 }, (_, i) => `w${i}`).join(' ');
  const doc = (vector: number[]) => ({
    title: 'T',
    vector,
    passages: [{ text: 'An [abstract](Other) passage.', vector }],
    sections: [{ title: 'S', passages: [{ text: long, vector }, { text: 'Short.' }] }],
  });

  it('keeps each passage whole (over MAX_WORDS too), with its links and vector; vectors are not content', () => {
    const a = prepareDocument(doc([1, 2]), { maxWords: 100 });
    expect(a.passages.map((p) => [p.ordinal, p.sectionPosition, p.wordCount])).toEqual([
      [0, null, 3],
      [1, 0, 150],
      [2, 0, 1],
    ]);
    expect(a.abstract).toBe('An abstract passage.');
    expect(a.passages[0].links).toEqual([{ target: 'Other', anchorText: 'abstract' }]);
    expect(Array.from(a.passages[1].vector!)).toEqual([1, 2]);
    expect(a.passages[2].vector).toBeUndefined();
    expect(Array.from(a.vector!)).toEqual([1, 2]);
    // the same text with other vectors is the same content; other boundaries are not
    expect(prepareDocument(doc([3, 4])).contentHash).toBe(a.contentHash);
    const split = { ...doc([1, 2]), sections: [{ title: 'S', passages: [{ text: `${long} Short.` }] }] };
    expect(prepareDocument(split).contentHash).not.toBe(a.contentHash);
    // and a document without passages hashes as before (the new fields are absent from its hash)
    const plain = { title: 'P', abstract: 'Text.', sections: [{ title: 'S', text: 'More text.' }] };
    expect(prepareDocument(plain).contentHash).toBe(prepareDocument({ ...plain, passages: undefined, vector: undefined }).contentHash);
  });

  it('refuses text and passages together, and bad vectors, per document', () => {
    expect(() => prepareDocument({ title: 'T', sections: [{ title: 'S', text: 'x', passages: [{ text: 'y' }] }] })).toThrow(
      /sections\[0\] has both text and passages/,
    );
    expect(() => prepareDocument({ title: 'T', abstract: 'x', passages: [{ text: 'y' }] })).toThrow(/abstract or passages/);
    expect(() => prepareDocument({ title: 'T', passages: [{ text: '  ' }] })).toThrow(/passages\[0\]\.text is empty/);
    expect(() => prepareDocument({ title: 'T', passages: [{ text: 'y', vector: [1, Number.NaN] }] })).toThrow(/passages\[0\]\.vector has NaN/);
    expect(() => prepareDocument({ title: 'T', vector: [], passages: [{ text: 'y' }] })).toThrow(/vector is empty/);
  });
});
