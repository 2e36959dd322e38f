/**
 * Re-embedding jobs and model switching through the GraphQL API, on the suite's real database,
 * with models the test builds itself (tiny BERTs: a real custom-model path, fast to embed).
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncoderSet } from '../src/encoders/set';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import type { Encoder } from '../src/encoders/types';
import { passageEncodingText } from '../src/ingest/summary';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { getJob } from '../src/store/jobs';
import { createApiKey } from '../src/store/keys';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { writeTinyModel } from './helpers/tiny-model';

const WORDS = [
  'the capital of france is paris',
  'the river of germany',
  'berlin is a city',
  'the largest mountain',
  'north and south border',
  'what country is passage',
];

function corpus(n: number, offset = 0) {
  return Array.from({ length: n }, (_, i) => ({
    key: `doc-${i + offset}`,
    title: `${WORDS[(i + offset) % WORDS.length]} ${i + offset}`,
    abstract: `${WORDS[(i + 1 + offset) % WORDS.length]}.`,
    sections: [
      { title: 'capital', text: `${WORDS[(i + 2) % WORDS.length]}. ${WORDS[(i + 3) % WORDS.length]}.` },
      { title: 'river', text: `${WORDS[(i + 4) % WORDS.length]} ${i}.`, sections: [{ title: 'north', text: `${WORDS[i % WORDS.length]} ${offset}.` }] },
    ],
  }));
}

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed embedded { documents passages } } }`;
const REGISTER = `mutation($path: String!) { registerEmbeddingModel(path: $path) { name dimension source roles documents passages } }`;
const REEMBED = `mutation($model: String!, $scope: ReembedScope, $ids: [ID!]) {
  reembed(model: $model, scope: $scope, documentIds: $ids) { id model scope status documents { done total } passages { done total } } }`;
const JOB = `query($id: ID!) { job(id: $id) { id status documents { done total } passages { done total } ratePerSecond etaSeconds error startedAt finishedAt } }`;
const ACTIVATE = `mutation($model: String!, $roles: [EncoderRole!]) { activateEmbeddingModel(model: $model, roles: $roles) { name roles } }`;
const MODELS = `{ embeddingModels { name roles documents staleDocuments passages } }`;
const RETRIEVE = `query($q: String!) { retrieve(question: $q, k1: 5, k2: 10) { model passages { score passage { id } } } }`;

describe('re-embedding jobs and model switching', () => {
  let root: string;
  let api: TestApi;
  let tinyA: Encoder;
  let dirB: string;
  let worker: JobWorker;

  const count = async (sql: string, params: unknown[] = []) => (await api.testDb.db.query<{ n: number }>(sql, params))[0].n;
  const runJob = async (id: string, w: JobWorker = worker) => {
    await w.run({ until: async () => ['succeeded', 'failed', 'cancelled'].includes((await getJob(api.testDb.db, Number(id)))!.status) });
    return dataOf(await api.exec(JOB, { id })).job;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dhr-jobs-'));
    tinyA = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-a', { seed: 1 }));
    dirB = await writeTinyModel(root, 'tiny-b', { seed: 2 });
    api = await createTestApi(
      { JOB_BATCH_SIZE: '4', MODELS_DIR: root },
      EncoderSet.of({ questionDocument: tinyA, document: tinyA, questionPassage: tinyA, passage: tinyA }),
    );
    worker = new JobWorker(api.testDb.db, api.models!, { batchSize: 4, pollMs: 10 });
    const ingested = dataOf(await api.exec(INGEST, { docs: corpus(10) })).ingestDocuments;
    expect(ingested).toMatchObject({ created: 10, failed: 0, embedded: { documents: 10 } });
  });
  afterAll(async () => {
    await api.close();
    await api.models?.close();
    await tinyA.close();
    await rm(root, { recursive: true, force: true });
  });

  it('registers, refuses to activate an incomplete model, re-embeds, activates, and retrieval follows', async () => {
    const passages = await count('SELECT count(*)::int AS n FROM passages');
    // A folder name is read inside MODELS_DIR; the stored source is its real path.
    const registered = dataOf(await api.exec(REGISTER, { path: 'tiny-b' })).registerEmbeddingModel;
    expect(registered).toEqual({ name: 'tiny-b', dimension: 8, source: await realpath(dirB), roles: [], documents: 0, passages: 0 });

    const refused = await api.exec(ACTIVATE, { model: 'tiny-b' });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'MODEL_INCOMPLETE', missing: { documents: 10, passages } });
    expect(refused.errors?.[0].message).toMatch(/tiny-b.*10 documents and \d+ passages.*reembed/);

    const before = dataOf(await api.exec(RETRIEVE, { q: 'capital of france' })).retrieve;
    expect(before.model).toBe('tiny-a');

    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-b' })).reembed;
    expect(job).toMatchObject({ model: 'tiny-b', scope: 'ALL', status: 'QUEUED', documents: { done: 0, total: 10 }, passages: { done: 0, total: passages } });
    const twice = await api.exec(REEMBED, { model: 'tiny-b' });
    expect(twice.errors?.[0].extensions?.code).toBe('JOB_CONFLICT');
    expect(twice.errors?.[0].message).toContain(`job ${job.id}`);
    expect(dataOf(await api.exec(`{ jobs(status: QUEUED) { id } }`)).jobs).toEqual([{ id: job.id }]);

    const done = await runJob(job.id);
    expect(done).toMatchObject({
      status: 'SUCCEEDED',
      documents: { done: 10, total: 10 },
      passages: { done: passages, total: passages },
      etaSeconds: null,
      error: null,
    });
    expect(done.ratePerSecond).toBeGreaterThan(0);
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.startedAt));

    // Exactly one vector per passage for the new model, equal to encoding the passage now.
    expect(await count(`SELECT count(*)::int AS n FROM passage_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-b'`)).toBe(
      passages,
    );
    const b = await TransformerEncoder.load(dirB);
    try {
      const sample = await api.testDb.db.query<{ id: number; text: string; titlePath: string[]; embedding: string }>(
        `SELECT p.id, p.text, p.title_path AS "titlePath", e.embedding::text AS embedding FROM passages p
         JOIN passage_embeddings e ON e.passage_id = p.id JOIN embedding_models m ON m.id = e.model_id AND m.name = 'tiny-b' ORDER BY p.id LIMIT 5`,
      );
      const { vectors } = await b.encode(
        sample.map((p) => passageEncodingText(p)),
        'passage',
      );
      sample.forEach((p, i) => JSON.parse(p.embedding).forEach((x: number, j: number) => expect(x).toBeCloseTo(vectors[i][j], 5)));
    } finally {
      await b.close();
    }

    // Old embeddings stay until the switch; the switch is immediate for this process.
    const activated = dataOf(await api.exec(ACTIVATE, { model: 'tiny-b' })).activateEmbeddingModel;
    expect(activated).toEqual([
      { name: 'tiny-a', roles: [] },
      { name: 'tiny-b', roles: ['QUESTION_DOCUMENT', 'DOCUMENT', 'QUESTION_PASSAGE', 'PASSAGE'] },
    ]);
    const after = dataOf(await api.exec(RETRIEVE, { q: 'capital of france' })).retrieve;
    expect(after.model).toBe('tiny-b');
    expect(after.passages).toHaveLength(10);

    // An active model cannot be dropped; the old one can, with its vectors.
    expect((await api.exec(`mutation { dropEmbeddingModel(model: "tiny-b") }`)).errors?.[0].extensions?.code).toBe('MODEL_ACTIVE');
    expect(dataOf(await api.exec(`mutation { dropEmbeddingModel(model: "tiny-a") }`)).dropEmbeddingModel).toBe(true);
    expect(await count(`SELECT count(*)::int AS n FROM embedding_models WHERE name = 'tiny-a'`)).toBe(0);
    expect(dataOf(await api.exec(MODELS)).embeddingModels.map((m: { name: string }) => m.name)).toEqual(['tiny-b']);
  });

  it('scopes DOCUMENTS and STALE embed only what they name; ALL rewrites everything', async () => {
    const dirC = await writeTinyModel(root, 'tiny-c', { seed: 3 });
    dataOf(await api.exec(REGISTER, { path: dirC }));
    const [first] = await api.testDb.db.query<{ id: number; passages: number }>(
      'SELECT d.id, (SELECT count(*)::int FROM passages p WHERE p.document_id = d.id) AS passages FROM documents d ORDER BY d.id LIMIT 1',
    );
    const listed = dataOf(await api.exec(REEMBED, { model: 'tiny-c', scope: 'DOCUMENTS', ids: [String(first.id)] })).reembed;
    expect(listed).toMatchObject({ scope: 'DOCUMENTS', documents: { total: 1 }, passages: { total: first.passages } });
    expect(await runJob(listed.id)).toMatchObject({ status: 'SUCCEEDED', documents: { done: 1 }, passages: { done: first.passages } });

    const passages = await count('SELECT count(*)::int AS n FROM passages');
    const stale = dataOf(await api.exec(REEMBED, { model: 'tiny-c', scope: 'STALE' })).reembed;
    expect(stale).toMatchObject({ documents: { total: 9 }, passages: { total: passages - first.passages } });
    await runJob(stale.id);
    const stamps = await api.testDb.db.query<{ at: string }>(
      `SELECT max(e.embedded_at)::text AS at FROM passage_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-c'`,
    );

    const all = dataOf(await api.exec(REEMBED, { model: 'tiny-c', scope: 'ALL' })).reembed;
    expect(all).toMatchObject({ documents: { total: 10 }, passages: { total: passages } });
    expect(await runJob(all.id)).toMatchObject({ status: 'SUCCEEDED', passages: { done: passages } });
    expect(
      await count(
        `SELECT count(*)::int AS n FROM passage_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-c' AND e.embedded_at > $1::timestamptz`,
        [stamps[0].at],
      ),
    ).toBe(passages);
    expect(await count(`SELECT count(*)::int AS n FROM passage_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-c'`)).toBe(
      passages,
    );

    const errors = await Promise.all([
      api.exec(REEMBED, { model: 'tiny-c', scope: 'DOCUMENTS' }),
      api.exec(REEMBED, { model: 'tiny-c', scope: 'STALE', ids: ['1'] }),
      api.exec(REEMBED, { model: 'nope' }),
      api.exec(REEMBED, { model: 'tiny-c', scope: 'DOCUMENTS', ids: ['999999'] }),
      api.exec(REEMBED, { model: 'tiny-c', scope: 'DOCUMENTS', ids: ['x'] }),
    ]);
    expect(errors.map((e) => [e.errors?.[0].extensions?.code, e.errors?.[0].extensions?.argument])).toEqual([
      ['BAD_USER_INPUT', 'documentIds'],
      ['BAD_USER_INPUT', 'documentIds'],
      ['NOT_FOUND', 'model'],
      ['NOT_FOUND', 'documentIds'],
      ['BAD_USER_INPUT', 'documentIds'],
    ]);
    expect(await count(`SELECT count(*)::int AS n FROM embedding_jobs WHERE status IN ('queued', 'running')`)).toBe(0);
  });

  it('cancels a job: workers stop claiming it and it cannot be cancelled twice', async () => {
    const dirD = await writeTinyModel(root, 'tiny-d', { seed: 4 });
    dataOf(await api.exec(REGISTER, { path: dirD }));
    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-d' })).reembed;
    expect(await worker.step()).toBe(true); // one batch of documents
    const cancelled = dataOf(await api.exec(`mutation($id: ID!) { cancelJob(id: $id) { status documents { done } finishedAt } }`, { id: job.id })).cancelJob;
    expect(cancelled).toMatchObject({ status: 'CANCELLED', documents: { done: 4 } });
    expect(await worker.step()).toBe(false);
    expect(await count(`SELECT count(*)::int AS n FROM document_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-d'`)).toBe(4);
    const again = await api.exec(`mutation($id: ID!) { cancelJob(id: $id) { status } }`, { id: job.id });
    expect(again.errors?.[0].extensions?.code).toBe('JOB_CONFLICT');
    expect((await api.exec(`mutation { cancelJob(id: "424242") { status } }`)).errors?.[0].extensions?.code).toBe('NOT_FOUND');
    // A cancelled job frees its model for a new one.
    const next = dataOf(await api.exec(REEMBED, { model: 'tiny-d', scope: 'STALE' })).reembed;
    expect(next).toMatchObject({ documents: { total: 6 } });
    expect(await runJob(next.id)).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('embeds documents ingested during a job and does not resurrect deleted ones', async () => {
    const dirE = await writeTinyModel(root, 'tiny-e', { seed: 5 });
    dataOf(await api.exec(REGISTER, { path: dirE }));
    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-e' })).reembed;
    await worker.step(); // documents 1–4 done
    const [victim] = await api.testDb.db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'doc-9'`);
    expect(dataOf(await api.exec(`mutation($id: ID!) { deleteDocument(id: $id) }`, { id: String(victim.id) })).deleteDocument).toBe(true);
    dataOf(await api.exec(INGEST, { docs: corpus(2, 100) }));
    const done = await runJob(job.id);
    const documents = await count('SELECT count(*)::int AS n FROM documents');
    const passages = await count('SELECT count(*)::int AS n FROM passages');
    expect(done).toMatchObject({ status: 'SUCCEEDED', documents: { done: documents, total: documents }, passages: { done: passages, total: passages } });
    const e = (level: string) =>
      count(`SELECT count(*)::int AS n FROM ${level}_embeddings e JOIN embedding_models m ON m.id = e.model_id WHERE m.name = 'tiny-e'`);
    expect(await e('document')).toBe(documents);
    expect(await e('passage')).toBe(passages);
    expect(await count('SELECT count(*)::int AS n FROM document_embeddings WHERE document_id = $1', [victim.id])).toBe(0);
  });

  it('several workers share a job without doing any batch twice', async () => {
    const dirF = await writeTinyModel(root, 'tiny-f', { seed: 6 });
    dataOf(await api.exec(REGISTER, { path: dirF }));
    const traces = [0, 1, 2].map((i) => join(root, `trace-${i}`));
    const workers = traces.map((trace) => new JobWorker(api.testDb.db, api.models!, { batchSize: 4, pollMs: 10, trace }));
    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-f' })).reembed;
    const until = async () => (await getJob(api.testDb.db, Number(job.id)))!.status === 'succeeded';
    await Promise.all(workers.map((w) => w.run({ until })));
    const encoded = { documents: [] as number[], passages: [] as number[] };
    for (const trace of traces) {
      const text = await readFile(trace, 'utf8').catch(() => '');
      for (const line of text.trim().split('\n').filter(Boolean)) {
        const [level, ids] = line.split(' ');
        encoded[level as 'documents' | 'passages'].push(...(ids ? ids.split(',').map(Number) : []));
      }
    }
    const documents = await count('SELECT count(*)::int AS n FROM documents');
    const passages = await count('SELECT count(*)::int AS n FROM passages');
    expect(encoded.documents).toHaveLength(documents);
    expect(new Set(encoded.documents).size).toBe(documents);
    expect(encoded.passages).toHaveLength(passages);
    expect(new Set(encoded.passages).size).toBe(passages);
    if (api.testDb.kind === 'postgres') {
      // On a server the workers really overlap: more than one of them did work.
      const busy = await Promise.all(
        traces.map((t) =>
          readFile(t, 'utf8').then(
            (s) => s.length > 0,
            () => false,
          ),
        ),
      );
      expect(busy.filter(Boolean).length).toBeGreaterThan(1);
    }
  });

  it('retrieval keeps answering from the active model while a job runs', async () => {
    const dirG = await writeTinyModel(root, 'tiny-g', { seed: 8 });
    dataOf(await api.exec(REGISTER, { path: dirG }));
    const question = 'the river of germany';
    const expected = dataOf(await api.exec(RETRIEVE, { q: question })).retrieve;
    const job = dataOf(await api.exec(REEMBED, { model: 'tiny-g' })).reembed;
    let finished = false;
    const running = runJob(job.id).then((r) => {
      finished = true;
      return r;
    });
    let queries = 0;
    while (!finished) {
      const result = dataOf(await api.exec(RETRIEVE, { q: question })).retrieve;
      expect(result).toEqual(expected);
      queries += 1;
    }
    expect((await running).status).toBe('SUCCEEDED');
    expect(queries).toBeGreaterThan(1);
  });

  it('the HTTP server works jobs itself; job mutations need an admin key', async () => {
    const dirS = await writeTinyModel(root, 'tiny-s', { seed: 10 });
    const { key } = await createApiKey(api.testDb.db, { role: 'admin', name: 'jobs test' });
    const { key: readerKey } = await createApiKey(api.testDb.db, { role: 'reader', name: 'jobs reader' });
    const { url, stop } = await startServer(api.testDb.db, loadConfig({ PORT: '0', JOB_POLL_MS: '50', JOB_BATCH_SIZE: '8', MODELS_DIR: root }), api.models);
    try {
      const post = async (query: string, variables: Record<string, unknown>, auth?: string) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
          body: JSON.stringify({ query, variables }),
        });
        return (await response.json()) as { data?: any; errors?: { extensions?: { code?: string } }[] };
      };
      expect((await post(REGISTER, { path: dirS })).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
      expect((await post(REGISTER, { path: dirS }, readerKey)).errors?.[0].extensions?.code).toBe('FORBIDDEN');
      expect((await post(REGISTER, { path: dirS }, key)).data.registerEmbeddingModel.name).toBe('tiny-s');
      const job = (await post(REEMBED, { model: 'tiny-s' }, key)).data.reembed;
      let status = job.status;
      for (let i = 0; i < 400 && status !== 'SUCCEEDED' && status !== 'FAILED'; i++) {
        await new Promise((r) => setTimeout(r, 25));
        status = (await post(JOB, { id: job.id })).data.job.status; // reads are public by default
      }
      expect(status).toBe('SUCCEEDED');
      expect((await post(`mutation($id: ID!) { cancelJob(id: $id) { status } }`, { id: job.id })).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await stop();
    }
  });

  it('activation keeps question and target encoders in one space, per role', async () => {
    const dirH = await writeTinyModel(root, 'tiny-h16', { hidden: 16, seed: 9 });
    dataOf(await api.exec(REGISTER, { path: dirH }));
    await runJob(dataOf(await api.exec(REEMBED, { model: 'tiny-h16' })).reembed.id);
    const mismatch = await api.exec(ACTIVATE, { model: 'tiny-h16', roles: ['DOCUMENT'] });
    expect(mismatch.errors?.[0].extensions?.code).toBe('DIMENSION_MISMATCH');
    expect(mismatch.errors?.[0].message).toMatch(/questionDocument.*tiny-b.*8-d.*tiny-h16.*16-d/);
    expect((await api.exec(ACTIVATE, { model: 'tiny-h16', roles: [] })).errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect((await api.exec(ACTIVATE, { model: 'nope' })).errors?.[0].extensions?.code).toBe('NOT_FOUND');

    // DHR's document stage on one model, its passage stage on another.
    const models = dataOf(await api.exec(ACTIVATE, { model: 'tiny-h16', roles: ['QUESTION_DOCUMENT', 'DOCUMENT'] })).activateEmbeddingModel;
    expect(models.filter((m: { roles: string[] }) => m.roles.length > 0)).toEqual([
      { name: 'tiny-b', roles: ['QUESTION_PASSAGE', 'PASSAGE'] },
      { name: 'tiny-h16', roles: ['QUESTION_DOCUMENT', 'DOCUMENT'] },
    ]);
    const result = dataOf(
      await api.exec(`{ retrieve(question: "berlin", k1: 3, k2: 5) { model passages { documentScore passageScore } documents { score } } }`),
    ).retrieve;
    expect(result.model).toBe('tiny-b');
    expect(result.documents).toHaveLength(3);
    expect(result.passages.length).toBeGreaterThan(0);
    const docs = dataOf(await api.exec(`{ retrieve(question: "berlin", k1: 3, mode: DOCUMENTS) { model } }`)).retrieve;
    expect(docs.model).toBe('tiny-h16');

    // Registering a different model under a taken name is a conflict; a bad folder is invalid.
    const other = await writeTinyModel(join(root, 'elsewhere'), 'tiny-b', { seed: 99 });
    expect((await api.exec(REGISTER, { path: other })).errors?.[0].extensions?.code).toBe('CONFLICT');
    // Not a model folder in MODELS_DIR: the one BAD_USER_INPUT answer (test/input-validation.test.ts).
    expect((await api.exec(REGISTER, { path: join(root, 'missing') })).errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'path' });
  });
});
