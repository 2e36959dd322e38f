import { parseNodeId } from '../src/graphql/ids';
import { EncoderSet } from '../src/encoders/set';
import { loadConfig } from '../src/config';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

/** `retrieve` end to end with the real default model, checked against brute force computed here. */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const RETRIEVE = `query($q: String!, $k1: Int, $k2: Int, $lambda: Float, $mode: RetrievalMode, $filter: RetrievalFilter, $exact: Boolean, $perDocument: Int, $perDocumentDecay: Float, $passageBudget: Int) {
  retrieve(question: $q, k1: $k1, k2: $k2, lambda: $lambda, mode: $mode, filter: $filter, exact: $exact, perDocument: $perDocument, perDocumentDecay: $perDocumentDecay, passageBudget: $passageBudget) {
    mode k1 k2 lambda model
    timings { encodeMs searchMs totalMs }
    passages { rank score passageScore documentScore passage { id text titlePath document { key } } }
    documents { rank score document { id key } }
  }
}`;

const docs = [
  {
    key: 'berlin',
    title: 'Berlin',
    source: 'cities',
    metadata: { country: 'Germany' },
    abstract: 'Berlin is the capital and largest city of Germany.',
    sections: [
      { title: 'History', text: 'The Berlin Wall divided the city from 1961 to 1989.' },
      { title: 'Geography', text: 'The Spree river flows through the centre of the city.' },
    ],
  },
  {
    key: 'paris',
    title: 'Paris',
    source: 'cities',
    metadata: { country: 'France' },
    abstract: 'Paris is the capital of France.',
    sections: [
      { title: 'Culture', text: 'The Louvre is the most visited art museum in the world.' },
      { title: 'Geography', text: 'The Seine river runs through Paris.' },
    ],
  },
  {
    key: 'oslo',
    title: 'Oslo',
    source: 'cities',
    metadata: { country: 'Norway' },
    abstract: 'Oslo is the capital of Norway.',
    sections: [{ title: 'Geography', text: 'Oslo lies at the head of the Oslofjord.' }],
  },
  {
    key: 'rhine',
    title: 'Rhine',
    source: 'rivers',
    metadata: {},
    abstract: 'The Rhine is a river that flows from the Alps to the North Sea.',
    sections: [{ title: 'Course', text: 'The Rhine passes Basel, Cologne and Rotterdam.' }],
  },
];

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

describe('GraphQL retrieve with the default model', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({}, encoders);
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toEqual({ created: 4, failed: 0 });
  });
  afterAll(async () => {
    await api.close();
    await encoders.close();
  });

  it('HIERARCHICAL equals the brute-force DHR ranking over the stored vectors, exact and through HNSW', async () => {
    const question = 'Which river flows through Berlin?';
    const q = await encoders.encodeQuestion(question);
    const docRows = await api.testDb.db.query<{ key: string; embedding: string }>(
      `SELECT d.key, e.embedding::text AS embedding FROM document_embeddings e JOIN documents d ON d.id = e.document_id`,
    );
    const passageRows = await api.testDb.db.query<{ text: string; key: string; embedding: string }>(
      `SELECT p.text, d.key, e.embedding::text AS embedding FROM passage_embeddings e
       JOIN passages p ON p.id = e.passage_id JOIN documents d ON d.id = p.document_id`,
    );
    const docScore = new Map(docRows.map((r) => [r.key, dot(q.document, JSON.parse(r.embedding))]));
    const topDocs = [...docScore].sort((a, b) => b[1] - a[1]).slice(0, 2);
    const chosen = new Map(topDocs);
    const lambda = 0.5;
    const expected = passageRows
      .filter((r) => chosen.has(r.key))
      .map((r) => {
        const passageScore = dot(q.passage, JSON.parse(r.embedding));
        return { text: r.text, passageScore, documentScore: chosen.get(r.key)!, score: passageScore + lambda * chosen.get(r.key)! };
      })
      .sort((a, b) => b.score - a.score)
      .slice(0, 3);

    for (const exact of [true, false]) {
      const r = dataOf(await api.exec(RETRIEVE, { q: question, k1: 2, k2: 3, lambda, exact, mode: 'HIERARCHICAL' })).retrieve;
      expect(r).toMatchObject({ mode: 'HIERARCHICAL', k1: 2, k2: 3, lambda, model: 'use-lite' });
      expect(r.documents.map((d: any) => d.document.key)).toEqual(topDocs.map(([key]) => key));
      expect(r.passages.map((p: any) => p.passage.text)).toEqual(expected.map((e) => e.text));
      r.passages.forEach((p: any, i: number) => {
        expect(p.rank).toBe(i + 1);
        expect(Math.abs(p.score - expected[i].score)).toBeLessThan(1e-5);
        expect(Math.abs(p.passageScore - expected[i].passageScore)).toBeLessThan(1e-5);
        expect(Math.abs(p.documentScore - expected[i].documentScore)).toBeLessThan(1e-5);
      });
      expect(r.timings.totalMs).toBeGreaterThanOrEqual(r.timings.searchMs);
    }
    // And the model really answers a question, alone and in the default (hybrid) mode.
    const dense = dataOf(await api.exec(RETRIEVE, { q: 'When did the Berlin Wall divide the city?', k1: 4, k2: 1, mode: 'HIERARCHICAL' })).retrieve;
    expect(dense.passages[0].passage.text).toBe('The Berlin Wall divided the city from 1961 to 1989.');
    const byDefault = dataOf(await api.exec(RETRIEVE, { q: 'When did the Berlin Wall divide the city?', k1: 4, k2: 1 })).retrieve;
    expect(byDefault.mode).toBe('HYBRID_HIERARCHICAL');
    const top = byDefault.passages[0];
    expect(top.passage.text).toBe('The Berlin Wall divided the city from 1961 to 1989.');
    expect(top.passage.titlePath).toEqual(['Berlin', 'History']);
  });

  it('answers every mode through the same API', async () => {
    const run = async (mode: string, q = 'Where is the most visited art museum?') => dataOf(await api.exec(RETRIEVE, { q, mode, k1: 4, k2: 5 })).retrieve;
    const lexical = await run('LEXICAL', 'Louvre museum');
    expect(lexical.model).toBe('bm25');
    expect(lexical.passages[0].passage.text).toMatch(/Louvre/);
    expect(lexical.passages[0].documentScore).toBeNull();
    expect(lexical.documents).toEqual([]);
    const flat = await run('FLAT');
    expect(flat.passages).toHaveLength(5);
    expect(flat.passages.every((p: any) => p.documentScore === null && p.score === p.passageScore)).toBe(true);
    const documents = await run('DOCUMENTS');
    expect(documents.passages).toEqual([]);
    expect(documents.documents).toHaveLength(4);
    const parallel = await run('PARALLEL');
    expect(parallel.passages).toHaveLength(5);
    for (const p of parallel.passages) expect(Math.abs(p.score - (p.passageScore + p.documentScore))).toBeLessThan(1e-6);
    const hybrid = await run('HYBRID', 'Louvre art museum');
    expect(hybrid.passages).toHaveLength(5);
    expect(hybrid.passages[0].passage.text).toMatch(/Louvre/);
    // Weighted fusion of min-max normalized scores: a passage first by both signals scores 1.
    expect(hybrid.passages[0].score).toBeCloseTo(1, 10);
    const both = await run('HYBRID_HIERARCHICAL', 'Louvre art museum');
    expect(both.passages[0].passage.text).toMatch(/Louvre/);
    expect(both.documents[0].document.key).toBe('paris');
  });

  it('filters by source, metadata and document ids inside the SQL', async () => {
    const q = 'Which river flows through the city?';
    const bySource = dataOf(await api.exec(RETRIEVE, { q, k2: 50, filter: { sources: ['rivers'] } })).retrieve;
    expect(new Set(bySource.passages.map((p: any) => p.passage.document.key))).toEqual(new Set(['rhine']));
    expect(bySource.passages).toHaveLength(2);
    const byMeta = dataOf(await api.exec(RETRIEVE, { q, k2: 50, filter: { metadata: { country: 'France' } } })).retrieve;
    expect(new Set(byMeta.passages.map((p: any) => p.passage.document.key))).toEqual(new Set(['paris']));
    const osloId = dataOf(await api.exec(`{ document(key: "oslo") { id } }`)).document.id;
    const byId = dataOf(await api.exec(RETRIEVE, { q, mode: 'FLAT', k2: 50, filter: { documentIds: [osloId] } })).retrieve;
    expect(byId.passages.map((p: any) => p.passage.document.key)).toEqual(['oslo', 'oslo']);
  });

  it('bounds the passages of one document (perDocument): the best of each document, in the unbounded order', async () => {
    const q = 'Which river flows through the city?';
    const query = `query($q: String!, $k2: Int, $mode: RetrievalMode, $perDocument: Int) {
      retrieve(question: $q, k2: $k2, mode: $mode, perDocument: $perDocument) { perDocument passages { passage { id document { key } } } } }`;
    for (const mode of ['HYBRID_HIERARCHICAL', 'HIERARCHICAL', 'LEXICAL']) {
      const all = dataOf(await api.exec(query, { q, k2: 50, mode })).retrieve;
      expect(all.perDocument).toBeNull();
      const keys = all.passages.map((p: any) => p.passage.document.key);
      expect(new Set(keys).size).toBeLessThan(keys.length); // some document has two passages here
      const one = dataOf(await api.exec(query, { q, k2: 50, mode, perDocument: 1 })).retrieve;
      expect(one.perDocument).toBe(1);
      // the first passage of each document in the unbounded ranking, in that order
      const firsts = all.passages.filter((p: any, i: number) => keys.indexOf(p.passage.document.key) === i).map((p: any) => p.passage.id);
      expect(one.passages.map((p: any) => p.passage.id)).toEqual(firsts);
      // a bound of k2 or more bounds nothing, and says so
      const wide = dataOf(await api.exec(query, { q, k2: 3, mode, perDocument: 3 })).retrieve;
      expect(wide.perDocument).toBeNull();
      expect(wide.passages.map((p: any) => p.passage.id)).toEqual(all.passages.slice(0, 3).map((p: any) => p.passage.id));
    }
  });

  it.each([
    ['perDocument = 0', { q: 'x', perDocument: 0 }, 'perDocument', /perDocument must be an integer from 1 to 1000 \(k2 or more: no bound\), got 0/],
    ['perDocument over 1000', { q: 'x', perDocument: 1001 }, 'perDocument', /perDocument must be an integer from 1 to 1000/],
    ['a negative perDocumentDecay', { q: 'x', perDocumentDecay: -0.01 }, 'perDocumentDecay', /perDocumentDecay must be a finite number from 0 to 1, got -0.01/],
    ['perDocumentDecay over 1', { q: 'x', perDocumentDecay: 1.5 }, 'perDocumentDecay', /perDocumentDecay must be a finite number from 0 to 1, got 1.5/],
    ['passageBudget = 0', { q: 'x', passageBudget: 0 }, 'passageBudget', /passageBudget must be an integer from 1 to 1000000, got 0/],
    ['an empty question', { q: '   ' }, 'question', /question must not be empty/],
    ['a question too long', { q: 'x'.repeat(2001) }, 'question', /2001 characters, over the limit of 2000/],
    ['k1 = 0', { q: 'x', k1: 0 }, 'k1', /k1 must be an integer from 1 to 1000, got 0/],
    ['k1 over 1000', { q: 'x', k1: 1001 }, 'k1', /k1 must be an integer from 1 to 1000/],
    ['k2 = 0', { q: 'x', k2: 0 }, 'k2', /k2 must be an integer from 1 to 1000, got 0/],
    ['a negative lambda', { q: 'x', lambda: -0.5 }, 'lambda', /lambda must be a finite number from 0 to 10, got -0.5/],
    ['lambda over 10', { q: 'x', lambda: 11 }, 'lambda', /lambda must be/],
    ['a malformed document id', { q: 'x', filter: { documentIds: ['abc'] } }, 'filter.documentIds', /must be a Document id/],
  ])('rejects %s with BAD_USER_INPUT naming the argument', async (_name, vars, argument, message) => {
    const result = await api.exec(RETRIEVE, vars);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    expect(result.errors?.[0].message).toMatch(message);
  });

  it("the default mode's stage 2 mixes in the question without the document it names (titleLinkDense 0.5)", async () => {
    const QUERY = `query($q: String!) { retrieve(question: $q, k1: 4, k2: 20, exact: true) { passages { denseScore passage { id } } } }`;
    const vectors = new Map(
      (await api.testDb.db.query<{ id: number; embedding: string }>(`SELECT passage_id AS id, embedding::text AS embedding FROM passage_embeddings`)).map(
        (r) => [String(r.id), JSON.parse(r.embedding) as number[]],
      ),
    );
    const denseOf = async (q: string): Promise<{ dense: number; vector: number[] }[]> =>
      dataOf(await api.exec(QUERY, { q })).retrieve.passages.map((p: any) => ({
        dense: p.denseScore as number,
        vector: vectors.get(String(parseNodeId(p.passage.id, 'Passage', 'id')))!,
      }));
    // Berlin is named and stage 1 ranks it first: its name is left out of the second question
    const whole = (await encoders.encodeQuestion('Which river flows through Berlin?')).passage;
    const nameFree = (await encoders.encodeQuestion('Which river flows through?')).passage;
    const mixed = whole.map((x, i) => 0.5 * x + 0.5 * nameFree[i]);
    const named = await denseOf('Which river flows through Berlin?');
    expect(named.length).toBeGreaterThan(0);
    for (const p of named) expect(p.dense).toBeCloseTo(dot(mixed, p.vector), 4);
    // the mix differs from the whole question's (the test would pass vacuously otherwise)
    expect(named.some((p) => Math.abs(dot(whole, p.vector) - p.dense) > 1e-3)).toBe(true);
    // a question that names no document reads the whole question only
    const plain = await denseOf('Which river flows through the city?');
    const plainVector = (await encoders.encodeQuestion('Which river flows through the city?')).passage;
    for (const p of plain) expect(p.dense).toBeCloseTo(dot(plainVector, p.vector), 4);
  });
});

describe('GraphQL retrieve without encoders', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    await api.exec(INGEST, { docs });
  });
  afterAll(() => api.close());

  it('still answers LEXICAL, falls back to it by default, and refuses dense modes naming the argument', async () => {
    const lexical = dataOf(await api.exec(RETRIEVE, { q: 'Oslofjord', mode: 'LEXICAL' })).retrieve;
    expect(lexical.passages.map((p: any) => p.passage.text)).toEqual(['Oslo lies at the head of the Oslofjord.']);
    const byDefault = dataOf(await api.exec(`{ retrieve(question: "Oslofjord") { mode warnings passages { passage { text } } } }`)).retrieve;
    expect(byDefault.mode).toBe('LEXICAL');
    expect(byDefault.passages.map((p: any) => p.passage.text)).toEqual(['Oslo lies at the head of the Oslofjord.']);
    expect(byDefault.warnings.join(' ')).toMatch(/without encoders/);
    for (const mode of ['HIERARCHICAL', 'HYBRID_HIERARCHICAL', 'FLAT']) {
      const dense = await api.exec(RETRIEVE, { q: 'Oslofjord', mode });
      expect(dense.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'mode' });
      expect(dense.errors?.[0].message).toMatch(/needs encoders/);
    }
  });
});

describe('GraphQL retrieve with PER_DOCUMENT set', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi({ PER_DOCUMENT: '1' });
    await api.exec(INGEST, { docs });
  });
  afterAll(() => api.close());

  it('bounds passages per document when a question gives none; a question’s own perDocument wins', async () => {
    const query = `query($perDocument: Int) { retrieve(question: "Which river flows through the city?", mode: LEXICAL, k2: 50, perDocument: $perDocument) {
      perDocument passages { passage { document { key } } } } }`;
    const bounded = dataOf(await api.exec(query)).retrieve;
    expect(bounded.perDocument).toBe(1);
    const keys = bounded.passages.map((p: any) => p.passage.document.key);
    expect(keys.length).toBeGreaterThan(1);
    expect(new Set(keys).size).toBe(keys.length);
    const own = dataOf(await api.exec(query, { perDocument: 2 })).retrieve;
    expect(own.perDocument).toBe(2);
    const ownKeys = own.passages.map((p: any) => p.passage.document.key);
    expect(new Set(ownKeys).size).toBeLessThan(ownKeys.length);
    // An explicit null is no bound, over the server's PER_DOCUMENT; for lambda, null is only left out.
    const none = dataOf(await api.exec(query, { perDocument: null })).retrieve;
    expect(none.perDocument).toBeNull();
    const noneKeys = none.passages.map((p: any) => p.passage.document.key);
    expect(new Set(noneKeys).size).toBeLessThan(noneKeys.length);
    const params = `query($perDocument: Int, $lambda: Float) { retrieve(question: "river", mode: LEXICAL, perDocument: $perDocument, lambda: $lambda) {
      parameters { name value source } } }`;
    const given = dataOf(await api.exec(params, { perDocument: null, lambda: null })).retrieve.parameters;
    expect(given.find((p: any) => p.name === 'perDocument')).toMatchObject({ value: null, source: 'request' });
    expect(given.find((p: any) => p.name === 'lambda').source).not.toBe('request');
    const absent = dataOf(await api.exec(params)).retrieve.parameters;
    expect(absent.find((p: any) => p.name === 'perDocument')).toMatchObject({ value: 1, source: 'environment' });
    // a documents-only mode returns no passages, so no bound applies to it
    const documentsOnly = dataOf(
      await api.exec(`{ retrieve(question: "Which river flows through the city?", mode: LEXICAL_DOCUMENTS) { perDocument documents { rank } } }`),
    ).retrieve;
    expect(documentsOnly.perDocument).toBeNull();
    expect(documentsOnly.documents.length).toBeGreaterThan(0);
  });

  it('refuses a PER_DOCUMENT outside 1–1000 at startup, naming it', () => {
    expect(() => loadConfig({ PER_DOCUMENT: '0' })).toThrow(/PER_DOCUMENT/);
    expect(() => loadConfig({ PER_DOCUMENT: '1.5' })).toThrow(/PER_DOCUMENT/);
  });

  it('refuses a PER_DOCUMENT_DECAY outside 0–1 at startup, naming it; a valid one is the environment layer of perDocumentDecay', () => {
    expect(() => loadConfig({ PER_DOCUMENT_DECAY: '-0.1' })).toThrow(/PER_DOCUMENT_DECAY/);
    expect(() => loadConfig({ PER_DOCUMENT_DECAY: '2' })).toThrow(/PER_DOCUMENT_DECAY/);
    expect(loadConfig({ PER_DOCUMENT_DECAY: '0.05' }).ranking).toMatchObject({ perDocumentDecay: 0.05 });
    expect(loadConfig({}).ranking.perDocumentDecay).toBeUndefined();
  });
});
