/**
 * Durable ingest jobs: a large ingestDocuments returns a job at once, workers write
 * it a batch per transaction, and the store ends as a synchronous ingest of the same input leaves
 * it (rows, links, BM25 postings and statistics, outcomes). A batch that dies before its commit, a
 * server killed in the middle of a job, and `dhr ingest --url` waiting for (and walking away from)
 * a job on a real running server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import type { DocumentInput } from '../src/ingest/types';
import { ingest, type IngestOutcome } from '../src/pipeline/ingest';
import { ingestJobOptions, JobWorker } from '../src/pipeline/jobs/worker';
import { packageRoot } from '../src/paths';
import { createApiKey } from '../src/store/keys';
import { pruneFinishedJobs } from '../src/store/job-retention';
import { openMigratedDatabase } from '../src/store/open';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { cliEntry } from './helpers/cli-entry';
import { cliStore, dhr } from './helpers/cli';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import { prng } from './helpers/prng';
import { startServe, type ServeProcess } from './helpers/serve';
import { bm25Mismatches, storeSnapshot } from './helpers/store-snapshot';

const WORDS = ['river', 'capital', 'bridge', 'museum', 'harbour', 'mountain', 'castle', 'railway', 'festival', 'island', 'forest', 'market', 'the', 'of'];

/** Documents with sections, links to earlier and later documents, one bad document and one key given twice. */
function corpus(seed: number, documents: number, prefix: string): DocumentInput[] {
  const rand = prng(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ') + '.';
  const docs: DocumentInput[] = Array.from({ length: documents }, (_, i) => ({
    key: `${prefix}${i}`,
    title: `Place ${prefix}${i} ${pick()}`,
    abstract: `${sentence(3 + Math.floor(rand() * 5))} See [[${prefix}${(i + 5) % documents}]] and [[nowhere${i % 3}]].`,
    sections: Array.from({ length: 1 + (i % 3) }, (_, s) => ({
      title: s % 2 === 0 ? pick() : 'Details',
      text: Array.from({ length: 2 + Math.floor(rand() * 4) }, () => sentence(4 + Math.floor(rand() * 14))).join(' '),
    })),
  }));
  docs.splice(7, 0, { key: `${prefix}bad`, title: '' });
  docs.push({ key: `${prefix}3`, title: `Place ${prefix}3 again`, text: `The castle of the second version. [[${prefix}1]]` });
  return docs;
}

const JOB_FIELDS = `id status documents { done total } passages { done total exact } created updated unchanged failed
  documentsPerSecond passagesPerSecond etaSeconds error startedAt finishedAt`;
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created updated unchanged failed passages outcomes { index } job { ${JOB_FIELDS} } } }`;
const JOB = `query($id: ID!) { ingestJob(id: $id) { ${JOB_FIELDS} outcomes { index key status passages message } } }`;
const shape = (outcomes: readonly Pick<IngestOutcome, 'index' | 'key' | 'status' | 'passages' | 'message'>[]) =>
  outcomes.map((o) => ({ index: o.index, key: o.key, status: o.status.toUpperCase(), passages: o.passages, message: o.message }));

describe('ingest jobs through the API (in-process workers)', () => {
  let api: TestApi;
  let reference: TestDatabase;
  // Also two documents JSON cannot store (a NUL, a lone surrogate): failed when the job is queued, with a synchronous ingest's message.
  const docs = [
    ...corpus(3, 30, 'a').slice(0, 12),
    { key: 'anul', title: 'Nul', abstract: 'a\u0000b' },
    { key: 'asur', title: 'Sur', text: 'bad \uD800 text' },
    ...corpus(3, 30, 'a').slice(12),
  ];

  beforeAll(async () => {
    // Jobs from 9 documents on; small batches, so a 32-document ingest takes several.
    api = await createTestApi({ INGEST_JOB_DOCUMENTS: '8', INGEST_JOB_BATCH_DOCUMENTS: '4' });
    reference = await createTestDatabase();
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await reference?.drop();
  });

  const worker = (beforeCommit?: (jobId: number) => void) =>
    new JobWorker(api.testDb.db, undefined, { batchSize: 32, ingest: { ...ingestJobOptions(api.config), beforeCommit } });
  const documentCount = async () => (await api.testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents'))[0].n;

  it('answers a small ingest at once, with no job', async () => {
    const small = dataOf(await api.exec(INGEST, { docs: corpus(11, 5, 's').slice(0, 5) })).ingestDocuments;
    expect(small).toMatchObject({ created: 5, failed: 0, job: null });
    expect(small.outcomes).toHaveLength(5);
    // The reference store gets the same first call.
    await ingest(reference.db, corpus(11, 5, 's').slice(0, 5), { ...api.config.ingest });
  });

  it('refuses a job of no documents with BAD_USER_INPUT', async () => {
    const empty = await api.exec(`mutation { startIngest(documents: []) { id } }`);
    expect(empty.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'documents' });
    expect(empty.errors?.[0].message).toMatch(/documents is empty/);
    expect(dataOf(await api.exec(`{ ingestJobs { id } }`)).ingestJobs).toEqual([]);
  });

  it('returns a large ingest as a job at once, then workers write it batch by batch with advancing progress', async () => {
    const before = await documentCount();
    const answer = dataOf(await api.exec(INGEST, { docs })).ingestDocuments;
    expect(answer).toMatchObject({ created: 0, failed: 0, outcomes: [] });
    expect(answer.job).toMatchObject({
      status: 'QUEUED',
      documents: { done: 2, total: docs.length },
      failed: 2,
      passages: { done: 0, total: null, exact: false },
      etaSeconds: null,
    });
    // Nothing written by the request itself.
    expect(await documentCount()).toBe(before);

    const id = answer.job.id;
    const w = worker();
    const seen: { status: string; documents: number; passages: number; total: number | null }[] = [];
    while (await w.step()) {
      const job = dataOf(await api.exec(JOB, { id })).ingestJob;
      seen.push({ status: job.status, documents: job.documents.done, passages: job.passages.done, total: job.passages.total });
    }
    // The 32 storable documents in batches of 4, then the step that marks it succeeded (the other two were done when queued).
    expect(seen).toHaveLength(32 / 4 + 1);
    for (let i = 1; i < seen.length - 1; i++) {
      expect(seen[i].documents).toBe(seen[i - 1].documents + 4);
      expect(seen[i].passages).toBeGreaterThanOrEqual(seen[i - 1].passages);
    }
    expect(seen[0]).toMatchObject({ status: 'RUNNING', documents: 2 + 4 });
    expect(seen[0].total).toBeGreaterThan(0);
    expect(seen.at(-1)!.status).toBe('SUCCEEDED');

    const done = dataOf(await api.exec(JOB, { id })).ingestJob;
    const expected = await ingest(reference.db, docs, { ...api.config.ingest });
    expect(done).toMatchObject({
      status: 'SUCCEEDED',
      documents: { done: docs.length, total: docs.length },
      passages: { done: expected.passages, total: expected.passages, exact: true },
      created: expected.created,
      updated: expected.updated,
      unchanged: expected.unchanged,
      failed: expected.failed,
      etaSeconds: null,
      error: null,
    });
    expect(expected.failed).toBe(3);
    expect(done.documentsPerSecond).toBeGreaterThan(0);
    // The bad document failed alone, with its message; the key given twice was written in order.
    expect(done.outcomes).toEqual(shape(expected.outcomes));
    expect(done.outcomes.find((o: { key: string }) => o.key === 'abad')).toMatchObject({ status: 'FAILED', message: expect.stringMatching(/title/) });
    expect(
      dataOf(await api.exec(`query($id: ID!) { ingestJob(id: $id) { outcomes(status: FAILED) { index key message } } }`, { id })).ingestJob.outcomes,
    ).toEqual([
      { index: 7, key: 'abad', message: expect.stringMatching(/title/) },
      { index: 12, key: 'anul', message: 'document "anul": NUL character (\\u0000) in abstract' },
      { index: 13, key: 'asur', message: 'document "asur": invalid UTF-8 / malformed Unicode in text' },
    ]);
    // Rows, links, pending records and every BM25 row (impacts aside) as the synchronous ingest left them.
    const snapshot = await storeSnapshot(api.testDb.db);
    expect(snapshot.passagePostings.length).toBeGreaterThan(500);
    expect(snapshot).toEqual(await storeSnapshot(reference.db));
    expect(await bm25Mismatches(api.testDb.db)).toEqual([]);
  }, 120_000);

  it('resumes after a batch that died before its commit: none half-written, none twice', async () => {
    const more = corpus(7, 20, 'b');
    const id = dataOf(await api.exec(`mutation($docs: [DocumentInput!]!) { startIngest(documents: $docs) { id status } }`, { docs: more })).startIngest.id;
    let batches = 0;
    const dying = worker(() => {
      // The third batch has written its rows, outcomes and progress, and dies before the commit.
      if (++batches === 3) throw new Error('worker killed');
    });
    for (let i = 0; i < 3; i++) await dying.step();
    const halfway = dataOf(await api.exec(JOB, { id })).ingestJob;
    expect(halfway).toMatchObject({ status: 'RUNNING', documents: { done: 8, total: more.length } });
    expect(halfway.outcomes.map((o: { index: number }) => o.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    // A new worker (a restarted process) finishes it.
    const fresh = worker();
    while (await fresh.step());
    const done = dataOf(await api.exec(JOB, { id })).ingestJob;
    const expected = await ingest(reference.db, more, { ...api.config.ingest });
    expect(done).toMatchObject({ status: 'SUCCEEDED', created: expected.created, unchanged: 0, failed: 1, passages: { done: expected.passages } });
    expect(done.outcomes).toEqual(shape(expected.outcomes));
    expect(await storeSnapshot(api.testDb.db)).toEqual(await storeSnapshot(reference.db));
    expect(await bm25Mismatches(api.testDb.db)).toEqual([]);
  }, 120_000);

  it('cancels a queued job: workers leave it, a second cancel is JOB_CONFLICT', async () => {
    const id = dataOf(await api.exec(`mutation { startIngest(documents: [{ key: "c1", title: "C", text: "Cancelled before it ran." }]) { id } }`)).startIngest
      .id;
    const cancelled = dataOf(await api.exec(`mutation($id: ID!) { cancelIngestJob(id: $id) { status finishedAt } }`, { id })).cancelIngestJob;
    expect(cancelled.status).toBe('CANCELLED');
    expect(await worker().step()).toBe(false);
    expect(await api.testDb.db.query(`SELECT id FROM documents WHERE key = 'c1'`)).toEqual([]);
    // The documents it never wrote are not kept.
    expect(
      await api.testDb.db.query(
        `SELECT d.ordinal FROM ingest_job_documents d JOIN ingest_jobs j ON j.id = d.job_id WHERE j.status = 'cancelled' AND d.input IS NOT NULL`,
      ),
    ).toEqual([]);
    const again = await api.exec(`mutation($id: ID!) { cancelIngestJob(id: $id) { status } }`, { id });
    expect(again.errors?.[0].extensions?.code).toBe('JOB_CONFLICT');
    expect(dataOf(await api.exec(`{ ingestJobs(status: CANCELLED) { id } }`)).ingestJobs).toEqual([{ id }]);
  });

  it('reports an unknown job as null and a malformed id as BAD_USER_INPUT', async () => {
    expect(dataOf(await api.exec(JOB, { id: '999999' })).ingestJob).toBeNull();
    const bad = await api.exec(JOB, { id: 'x' });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
  });

  it('deletes jobs that finished longer ago than the retention, with their documents; never an open one', async () => {
    const db = api.testDb.db;
    const ids = async (sql: string) => (await db.query<{ id: number }>(sql)).map((r) => r.id);
    // The jobs the tests above finished, aged 40 days; one open job and one finished yesterday beside them.
    const old = await ids(`UPDATE ingest_jobs SET finished_at = now() - interval '40 days' WHERE finished_at IS NOT NULL RETURNING id`);
    expect(old.length).toBeGreaterThanOrEqual(2);
    const [openJob] = await ids(`INSERT INTO ingest_jobs (status, documents_total, bytes_total, created_at, started_at)
                                 VALUES ('running', 0, 0, now() - interval '90 days', now() - interval '90 days') RETURNING id`);
    const [recent] = await ids(
      `INSERT INTO ingest_jobs (status, documents_total, bytes_total, finished_at) VALUES ('succeeded', 0, 0, now() - interval '1 day') RETURNING id`,
    );
    const [oldTune] = await ids(`INSERT INTO tune_runs (mode, status, finished_at) VALUES ('HYBRID', 'failed', now() - interval '40 days') RETURNING id`);
    const [openTune] = await ids(`INSERT INTO tune_runs (mode, status, started_at) VALUES ('HYBRID', 'running', now() - interval '90 days') RETURNING id`);
    const [model] = await ids(`INSERT INTO embedding_models (name, runtime, dimension, checksum) VALUES ('retention-test', 'onnx', 4, 'x') RETURNING id`);
    const [oldEmbedding] = await ids(
      `INSERT INTO embedding_jobs (model_id, scope, status, finished_at) VALUES (${model}, 'ALL', 'succeeded', now() - interval '40 days') RETURNING id`,
    );
    await db.query(`INSERT INTO embedding_job_batches (job_id, level, first_id, last_id, items, done_at) VALUES ($1, 'passages', 1, 2, 2, now())`, [
      oldEmbedding,
    ]);
    const [queuedEmbedding] = await ids(
      `INSERT INTO embedding_jobs (model_id, scope, status, created_at) VALUES (${model}, 'ALL', 'queued', now() - interval '90 days') RETURNING id`,
    );
    const documentsOf = async (jobs: number[]) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ingest_job_documents WHERE job_id = ANY($1::int[])', [jobs]))[0].n;
    expect(await documentsOf(old)).toBeGreaterThan(0);

    expect(await pruneFinishedJobs(db, 30 * 86_400)).toEqual({ ingest: old.length, embedding: 1, tune: 1 });
    expect(await ids('SELECT id FROM embedding_jobs')).toEqual([queuedEmbedding]);
    expect(await db.query('SELECT job_id FROM embedding_job_batches WHERE job_id = $1', [oldEmbedding])).toEqual([]);
    await db.query('DELETE FROM embedding_models WHERE id = $1', [model]);
    expect(await ids('SELECT id FROM ingest_jobs ORDER BY id')).toEqual([openJob, recent].sort((a, b) => a - b));
    expect(await documentsOf(old)).toBe(0);
    expect(await ids('SELECT id FROM tune_runs ORDER BY id')).toEqual(expect.arrayContaining([openTune]));
    expect(await ids('SELECT id FROM tune_runs ORDER BY id')).not.toContain(oldTune);
    expect(dataOf(await api.exec(JOB, { id: String(old[0]) })).ingestJob).toBeNull();

    // An idle worker prunes with JOB_RETENTION_DAYS' retention; without one it keeps everything.
    await db.query('DELETE FROM ingest_jobs WHERE id = $1', [openJob]);
    await db.query('DELETE FROM tune_runs WHERE id = $1', [openTune]);
    await db.query(`UPDATE ingest_jobs SET finished_at = now() - interval '40 days' WHERE id = $1`, [recent]);
    expect(await worker().step()).toBe(false);
    expect(await ids('SELECT id FROM ingest_jobs')).toEqual([recent]);
    const pruning = new JobWorker(db, undefined, {
      batchSize: 32,
      ingest: ingestJobOptions(api.config),
      retentionSeconds: api.config.jobRetentionDays * 86_400,
      pruneEveryMs: 0,
    });
    expect(api.config.jobRetentionDays).toBe(30);
    expect(await pruning.step()).toBe(false);
    expect(await ids('SELECT id FROM ingest_jobs')).toEqual([]);
  });
});

describe("ingest jobs with the documents' own vectors (an external model)", () => {
  const DIM = 4;
  let job: TestApi;
  let sync: TestApi;
  const rand = prng(9);
  const vec = () => Array.from(Float32Array.from({ length: DIM }, () => rand() * 2 - 1));
  const docs = Array.from({ length: 12 }, (_, d) => ({
    key: `v${d}`,
    title: `Vectors ${d}`,
    vector: vec(),
    passages: [{ text: `Abstract of ${d}.`, vector: vec() }],
    sections: [
      {
        title: 'Part',
        passages: [
          { text: `First of ${d}.`, vector: vec() },
          { text: `Second of ${d}.`, vector: vec() },
        ],
      },
    ],
  }));
  const REGISTER = `mutation { registerExternalEmbeddingModel(name: "ext", dimension: ${DIM}) { name } }`;
  const INGEST_WITH = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs, model: "ext") { created job { id } } }`;
  const stored = (api: TestApi) =>
    Promise.all([
      api.testDb.db.query(`SELECT d.key, e.embedding::text FROM document_embeddings e JOIN documents d ON d.id = e.document_id ORDER BY 1`),
      api.testDb.db.query(
        `SELECT d.key, p.ordinal, e.embedding::text FROM passage_embeddings e JOIN passages p ON p.id = e.passage_id JOIN documents d ON d.id = p.document_id ORDER BY 1, 2`,
      ),
    ]);

  beforeAll(async () => {
    job = await createTestApi({ INGEST_JOB_DOCUMENTS: '8', INGEST_JOB_BATCH_DOCUMENTS: '5' });
    sync = await createTestApi();
    for (const api of [job, sync]) dataOf(await api.exec(REGISTER));
  }, 120_000);
  afterAll(async () => {
    await job?.close();
    await sync?.close();
  });

  it('refuses a bad vector when the job is queued, and writes the given vectors as a synchronous ingest does', async () => {
    const bad = await job.exec(INGEST_WITH, { docs: docs.map((d, i) => (i === 10 ? { ...d, vector: [1, 2] } : d)) });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'documents[10].vector' });
    expect(dataOf(await job.exec(`{ ingestJobs { id } }`)).ingestJobs).toEqual([]);

    const queued = dataOf(await job.exec(INGEST_WITH, { docs })).ingestDocuments;
    expect(queued).toMatchObject({ created: 0, job: { id: expect.any(String) } });
    const w = new JobWorker(job.testDb.db, undefined, { batchSize: 32, ingest: ingestJobOptions(job.config) });
    while (await w.step());
    expect(dataOf(await job.exec(JOB, { id: queued.job.id })).ingestJob).toMatchObject({ status: 'SUCCEEDED', created: 12, failed: 0 });
    expect(dataOf(await sync.exec(INGEST_WITH, { docs })).ingestDocuments).toMatchObject({ created: 12, job: null });
    const [documents, passages] = await stored(job);
    expect(documents).toHaveLength(12);
    expect(passages).toHaveLength(36);
    expect([documents, passages]).toEqual(await stored(sync));
  }, 120_000);
});

/** Markdown files of a few passages each: enough that a job takes several batches, with the real default model embedding them. */
function markdownFiles(dir: string, n: number, prefix: string): void {
  mkdirSync(dir, { recursive: true });
  const rand = prng(n);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = () => Array.from({ length: 8 + Math.floor(rand() * 10) }, pick).join(' ') + '.';
  for (let i = 0; i < n; i++) {
    const sections = Array.from({ length: 8 }, (_, s) => `## Part ${s}\n\n${Array.from({ length: 6 }, sentence).join(' ')}\n`).join('\n');
    writeFileSync(join(dir, `${prefix}-${i}.md`), `# ${prefix} note ${i}\n\nAbout ${pick()} ${i}.\n\n${sections}`);
  }
}

describe('ingest jobs on a real dhr serve: restart in the middle, dhr ingest --url', () => {
  let work: string;
  let store: Awaited<ReturnType<typeof cliStore>>;
  let serve: ServeProcess | undefined;
  let adminKey: string;
  const env = () => ({ ...store.env, ENCODER_THREADS: '1', INGEST_JOB_BATCH_DOCUMENTS: '2', JOB_POLL_MS: '100' });

  const post = async (query: string, variables?: Record<string, unknown>) => {
    const response = await fetch(serve!.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const job = async (id: string) => (await post(JOB, { id })).ingestJob;
  const until = async <T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 120_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const value = await read();
      if (ok(value)) return value;
      if (Date.now() > end) throw new Error(`never happened: ${what} (last: ${JSON.stringify(value)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const inStore = async <T>(read: (db: Awaited<ReturnType<typeof openMigratedDatabase>>) => Promise<T>): Promise<T> => {
    const db = await openMigratedDatabase(loadConfig(store.env));
    try {
      return await read(db);
    } finally {
      await db.close();
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'dhr-ingest-jobs-'));
    store = await cliStore(work);
    adminKey = (await inStore((db) => createApiKey(db, { role: 'admin', name: 'ingest jobs test' }))).key;
  }, 120_000);
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    await store?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('a job whose server is killed after a batch finishes after the restart, each document once', async () => {
    serve = await startServe(env());
    const docs = corpus(5, 24, 'k');
    const started = (await post(`mutation($docs: [DocumentInput!]!) { startIngest(documents: $docs) { id } }`, { docs })).startIngest;
    // Killed once a batch has committed and before the last one.
    const at = await until(
      'a batch committed',
      () => job(started.id),
      (j) => j.documents.done >= 2,
    );
    serve.child.kill('SIGKILL');
    await serve.exited;
    const killedAt = await inStore(
      async (db) => (await db.query<{ done: number }>('SELECT documents_done AS done FROM ingest_jobs WHERE id = $1', [Number(started.id)]))[0].done,
    );
    expect(killedAt).toBeGreaterThanOrEqual(at.documents.done);
    expect(killedAt).toBeLessThan(docs.length);

    serve = await startServe(env());
    const done = await until(
      'the job succeeded',
      () => job(started.id),
      (j) => j.status !== 'RUNNING' && j.status !== 'QUEUED',
    );
    // 24 keys created once each (the bad one failed, the repeated key updated its document): a batch
    // written twice would show as unchanged.
    expect(done).toMatchObject({
      status: 'SUCCEEDED',
      documents: { done: docs.length, total: docs.length },
      created: 24,
      updated: 1,
      unchanged: 0,
      failed: 1,
      error: null,
    });
    expect(done.outcomes.map((o: { index: number }) => o.index)).toEqual(docs.map((_, i) => i));
    const stats = (await post(`{ stats { documents passages } }`)).stats;
    expect(stats.documents).toBe(24);
    expect(stats.passages).toBe(
      done.passages.done - done.outcomes.find((o: { key: string; status: string }) => o.key === 'k3' && o.status === 'CREATED').passages,
    );
  }, 300_000);

  it('dhr ingest --url starts a job, shows its progress and waits for it; refuses unreadable paths and empty folders', async () => {
    const dir = join(work, 'notes');
    markdownFiles(dir, 12, 'note');
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    const cli = await dhr(['ingest', dir, '--url', serve!.url], { DHR_API_KEY: adminKey });
    expect(cli.stderr).toMatch(/ingest job \d+: 12 documents queued/);
    expect(cli.stderr).toMatch(/ingest \[#+\] 12\/12 /);
    expect(cli.stderr).toMatch(/failed: .*broken\.json/);
    expect(cli.stdout).toMatch(/ingested 13 documents on .*: 12 created, 0 updated, 0 unchanged, 1 failed; \d+ passages written/);
    expect(cli.code).toBe(2);
    const found = (await post(`{ documents(first: 100, titleContains: "note note") { totalCount } }`)).documents;
    expect(found.totalCount).toBe(12);
    // dhr jobs --ingest lists it (through the server holding an embedded store, or from the database);
    // broken.json never left the client.
    const id = Number(/ingest job (\d+)/.exec(cli.stderr)![1]);
    const listed = await dhr(['jobs', 'list', '--ingest', '--status', 'succeeded'], { ...store.env, DHR_API_KEY: adminKey });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({
        id,
        status: 'succeeded',
        documentsTotal: 12,
        documentsDone: 12,
        created: 12,
        failed: 0,
        error: null,
        finishedAt: expect.any(String),
      }),
    );

    const missing = await dhr(['ingest', join(work, 'nowhere'), '--url', serve!.url], { DHR_API_KEY: adminKey });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/ingest: cannot read .*nowhere: .*ENOENT.*nothing was sent/);
    mkdirSync(join(work, 'empty'));
    const empty = await dhr(['ingest', join(work, 'empty'), '--url', serve!.url], { DHR_API_KEY: adminKey });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/no documents found/);
  }, 300_000);

  it('Ctrl-C stops waiting and says how to follow the job, which goes on; --job follows it to the end', async () => {
    const dir = join(work, 'more');
    markdownFiles(dir, 30, 'more');
    const root = packageRoot();
    const child = spawn(process.execPath, [...cliEntry(root), 'ingest', dir, '--url', serve!.url], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DHR_API_KEY: adminKey },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const id = await until(
      'the job was queued',
      async () => /ingest job (\d+): 30 documents queued/.exec(stderr)?.[1],
      (v) => v !== undefined,
    );
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain(`stopped waiting; ingest job ${id} goes on in the server`);
    expect(stderr).toContain(`dhr ingest --url ${serve!.url} --job ${id}`);
    expect(stderr).toContain(`ingestJob(id: "${id}")`);

    const followed = await dhr(['ingest', '--url', serve!.url, '--job', id!], { DHR_API_KEY: adminKey });
    expect(followed.stdout).toMatch(new RegExp(`ingested 30 documents on .*: 30 created, .* 0 failed; \\d+ passages written \\(job ${id}\\)`));
    expect(followed.code).toBe(0);
    expect((await job(id!)).status).toBe('SUCCEEDED');
    // Embedded by the job (EMBED_ON_INGEST), as a synchronous ingest would be.
    const models = await post(`{ stats { passages } embeddingModels { passages } }`);
    expect(models.embeddingModels[0].passages).toBe(models.stats.passages);
  }, 300_000);

  it('leaves each key once, each passage once, and BM25 statistics equal to a recount of the postings', async () => {
    serve!.child.kill('SIGTERM');
    expect((await serve!.exited).code).toBe(0);
    await inStore(async (db) => {
      expect(await db.query('SELECT key FROM documents GROUP BY key HAVING count(*) > 1')).toEqual([]);
      expect(await db.query('SELECT document_id, ordinal FROM passages GROUP BY 1, 2 HAVING count(*) > 1')).toEqual([]);
      const [{ documents }] = await db.query<{ documents: number }>('SELECT count(*)::int AS documents FROM documents');
      expect(documents).toBe(24 + 12 + 30);
      expect(await bm25Mismatches(db)).toEqual([]);
      const [{ postings }] = await db.query<{ postings: number }>('SELECT count(*)::int AS postings FROM passage_postings');
      expect(postings).toBeGreaterThan(1000);
    });
  }, 120_000);
});
