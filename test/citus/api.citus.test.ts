/**
 * On Citus, what ingest jobs and brought vectors add to the API, through the real schema: vectors brought by
 * the caller (an external model) ranked as brute force over the same vectors, an ingest job written
 * by a worker (its batches on shards, the job's rows on the coordinator), and Relay pages both ways
 * against the store's own order.
 */
import { ingestJobOptions, JobWorker } from '../../src/pipeline/jobs/worker';
import { createTestApi, dataOf, type TestApi } from '../helpers/api';
import { createCitusDatabase } from '../helpers/citus';
import { prng } from '../helpers/prng';

const DIM = 6;
const REGISTER = `mutation { registerExternalEmbeddingModel(name: "byo", dimension: ${DIM}) { name } }`;
const ACTIVATE = `mutation { activateEmbeddingModel(model: "byo") { roles } }`;
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const START = `mutation($docs: [DocumentInput!]!) { startIngest(documents: $docs, model: "byo") { id } }`;
const JOB = `query($id: ID!) { ingestJob(id: $id) { status created failed error } }`;
const RETRIEVE = `query($v: [Float!]!) {
  retrieve(questionVector: $v, mode: HIERARCHICAL, k1: 5, k2: 8, lambda: 0.5, exact: true) { passages { score passage { ordinal document { key } } } }
}`;
const PAGE = 'edges { node { databaseId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

const f32 = (v: number[]) => Array.from(Float32Array.from(v));
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('Citus: vectors brought by the caller, an ingest job, Relay pages', () => {
  let api: TestApi;
  const rand = prng(11);
  const vec = () => f32(Array.from({ length: DIM }, () => rand() * 2 - 1));
  /** Each document's vector and its passages' vectors in reading order: the brute force's input. */
  const vectors = new Map<string, { document: number[]; passages: number[][] }>();
  const docs = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => {
      const key = `${prefix}-${i}`;
      const v = { document: vec(), passages: [vec(), vec(), vec()] };
      vectors.set(key, v);
      const passage = (j: number) => ({ text: `Passage ${j} of ${key} on the river and the harbour.`, vector: v.passages[j] });
      return {
        key,
        title: `Document ${key}`,
        vector: v.document,
        sections: [
          { title: 'Body', passages: [passage(0), passage(1)] },
          { title: 'More', passages: [passage(2)] },
        ],
      };
    });

  /** HIERARCHICAL by brute force: top 5 documents by q·d, their passages by q·p + 0.5·(q·d), top 8. */
  function expected(q: number[]) {
    const ranked = [...vectors]
      .map(([key, v]) => ({ key, score: dot(q, v.document) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 5);
    return ranked
      .flatMap(({ key, score }) => vectors.get(key)!.passages.map((p, ordinal) => ({ id: `${key}:${ordinal}`, score: dot(q, p) + 0.5 * score })))
      .sort((a, b) => b.score - a.score)
      .slice(0, 8);
  }

  async function expectBruteForce() {
    for (let i = 0; i < 3; i++) {
      const q = vec();
      const got = dataOf(await api.exec(RETRIEVE, { v: q })).retrieve.passages.map((p: any) => ({
        id: `${p.passage.document.key}:${p.passage.ordinal}`,
        score: p.score,
      }));
      const want = expected(q);
      expect(got.map((g: { id: string }) => g.id)).toEqual(want.map((w) => w.id));
      got.forEach((g: { score: number }, j: number) => expect(Math.abs(g.score - want[j].score)).toBeLessThan(1e-5));
    }
  }

  beforeAll(async () => {
    api = await createTestApi({}, undefined, {
      withRegistry: true,
      database: async () => {
        const citus = await createCitusDatabase();
        return { db: citus.db, kind: 'postgres', url: citus.url, drop: citus.drop };
      },
    });
    dataOf(await api.exec(REGISTER));
    dataOf(await api.exec(ACTIVATE));
    // 16 documents or more: the bulk path.
    expect(dataOf(await api.exec(INGEST, { docs: docs('sync', 17) })).ingestDocuments).toEqual({ created: 17, failed: 0 });
  }, 120_000);
  afterAll(() => api?.close());

  it('ranks the caller’s vectors as brute force does (HIERARCHICAL, exact)', async () => {
    await expectBruteForce();
  });

  it('an ingest job with vectors is written by a worker, batch by batch, and ranked with the rest', async () => {
    const { id } = dataOf(await api.exec(START, { docs: [...docs('job', 5), { ...docs('bad', 1)[0], title: '' }] })).startIngest;
    const worker = new JobWorker(api.testDb.db, api.models, { batchSize: 4, pollMs: 10, ingest: { ...ingestJobOptions(api.config), maxDocuments: 2 } });
    vectors.delete('bad-0');
    let steps = 0;
    while (await worker.step()) steps++;
    expect(steps).toBeGreaterThanOrEqual(3);
    expect(dataOf(await api.exec(JOB, { id })).ingestJob).toEqual({ status: 'SUCCEEDED', created: 5, failed: 1, error: null });
    await expectBruteForce();
  });

  it('pages documents and a document’s passages both ways in the store’s order', async () => {
    const documentIds = (await api.testDb.db.query<{ id: number }>('SELECT id FROM documents ORDER BY id')).map((r) => r.id);
    const passageIds = (
      await api.testDb.db.query<{ id: number }>(
        `SELECT p.id FROM passages p JOIN documents d ON d.id = p.document_id WHERE d.key = 'sync-3' ORDER BY p.ordinal`,
      )
    ).map((r) => r.id);
    const connection = async (field: 'documents' | 'passages', args: string) => {
      const data = dataOf(
        await api.exec(field === 'documents' ? `{ documents(${args}) { ${PAGE} } }` : `{ document(key: "sync-3") { passages(${args}) { ${PAGE} } } }`),
      );
      return field === 'documents' ? data.documents : data.document.passages;
    };
    for (const [field, all] of [
      ['documents', documentIds],
      ['passages', passageIds],
    ] as const) {
      const forward: number[] = [];
      for (let after: string | null = null; ; ) {
        const page: any = await connection(field, `first: 4${after ? `, after: "${after}"` : ''}`);
        forward.push(...page.edges.map((e: any) => e.node.databaseId));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      const backward: number[] = [];
      for (let before: string | null = null; ; ) {
        const page: any = await connection(field, `last: 4${before ? `, before: "${before}"` : ''}`);
        backward.unshift(...page.edges.map((e: any) => e.node.databaseId));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(forward).toEqual(all);
      expect(backward).toEqual(all);
    }
  });
});
