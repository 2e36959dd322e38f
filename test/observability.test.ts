/**
 * Observability over the real HTTP server: /metrics (Prometheus text from prom-client), the JSON
 * request log (pino, captured through its destination), /healthz and /readyz, with the database
 * reachable, unmigrated, closed (PGlite) or stopped (a private PostgreSQL, on the PostgreSQL leg).
 */
import { loadConfig } from '../src/config';
import { ingestDocuments } from '../src/pipeline/ingest';
import { startServer } from '../src/server';
import type { Database } from '../src/store/db';
import { indexLexical } from '../src/store/lexical';
import { createApiKey } from '../src/store/keys';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { PostgresDatabase } from '../src/store/postgres';
import { createTestDatabase, useTestDatabase } from './helpers/database';
import { captureLog } from './helpers/log-capture';
import { startPrivatePostgres } from './helpers/private-postgres';

const onServer = process.env.DATABASE_URL ? describe : describe.skip;
const INGEST_OPTIONS = { maxWords: 100, maxDocumentBytes: 1e6 };
const RETRIEVE = '{ retrieve(question: "Which river crosses the plain?", k2: 3) { mode passages { rank } } }';

async function post(url: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query }) });
  return { status: response.status, requestId: response.headers.get('x-request-id'), body: (await response.json()) as any };
}

async function get(url: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path, url), { headers });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), text, json: () => JSON.parse(text) };
}

/** The value of one sample in Prometheus text, or undefined when the series is absent. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics and request logs', () => {
  const t = useTestDatabase();
  const log = captureLog();
  let url: string;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    await ingestDocuments(
      t.db,
      [{ key: 'river', title: 'River', sections: [{ title: 'Course', text: 'The river crosses the plain before it reaches the sea.' }] }],
      INGEST_OPTIONS,
    );
    await indexLexical(t.db);
    // No encoders: retrieval runs LEXICAL. Three queries per window per client, so the fourth is refused.
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0', RATE_LIMIT_QUERIES: '3' }), undefined, { logDestination: log.destination }));
  });
  afterAll(async () => {
    await stop?.();
  });

  it('counts requests by operation and outcome, times retrieve per mode, counts rate-limit refusals, logs one line per request', async () => {
    const before = (await get(url, '/metrics')).text;
    expect(sample(before, 'dhr_graphql_requests_total{operation="retrieve",type="query",outcome="ok"}')).toBeUndefined();

    const retrieved = await post(url, RETRIEVE);
    expect(retrieved.status).toBe(200);
    expect(retrieved.body.data.retrieve.mode).toBe('LEXICAL');
    expect(retrieved.body.data.retrieve.passages).toHaveLength(1);
    expect((await post(url, '{ stats { documents } }')).status).toBe(200);
    // Two root fields through a fragment: labelled by both, sorted.
    expect((await post(url, '{ ...F } fragment F on Query { stats { passages } document(key: "river") { title } }')).status).toBe(200);
    const refused = await post(url, '{ stats { documents } }');
    expect(refused.status).toBe(429);
    expect(refused.body.errors[0].extensions.code).toBe('RATE_LIMITED');

    const metrics = await get(url, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = metrics.text;
    expect(sample(text, 'dhr_graphql_requests_total{operation="retrieve",type="query",outcome="ok"}')).toBe(1);
    expect(sample(text, 'dhr_graphql_requests_total{operation="stats",type="query",outcome="ok"}')).toBe(1);
    expect(sample(text, 'dhr_graphql_requests_total{operation="document+stats",type="query",outcome="ok"}')).toBe(1);
    expect(sample(text, 'dhr_graphql_requests_total{operation="stats",type="query",outcome="RATE_LIMITED"}')).toBe(1);
    expect(sample(text, 'dhr_rate_limit_rejections_total{kind="query"}')).toBe(1);
    expect(sample(text, 'dhr_graphql_request_duration_seconds_count{operation="retrieve",type="query",outcome="ok"}')).toBe(1);
    for (const stage of ['encode', 'search', 'total']) {
      expect(sample(text, `dhr_retrieve_duration_seconds_count{mode="LEXICAL",stage="${stage}"}`)).toBe(1);
    }
    // Default process metrics, job gauges read from the database, pool gauges on PostgreSQL only.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(sample(text, 'dhr_embedding_jobs{status="running"}')).toBe(0);
    expect(sample(text, 'dhr_database_up')).toBe(1);
    if (t.kind === 'postgres') expect(sample(text, 'dhr_db_pool_connections{state="max"}')).toBe(10);
    else expect(text).not.toMatch(/^dhr_db_pool_connections\{/m);

    // The log: one JSON line per request with its id, operation, outcome, status and duration.
    const line = log.lines.find((l) => l.msg === 'request' && l.requestId === retrieved.requestId);
    expect(line).toMatchObject({ level: 30, method: 'POST', path: '/', status: 200, operation: 'retrieve', type: 'query', outcome: 'ok' });
    // The HTTP request contains its GraphQL execution: the logged duration is no shorter than the
    // histogram's one retrieve sample (same clock; the log rounds to 0.01 ms).
    const executed = sample(text, 'dhr_graphql_request_duration_seconds_sum{operation="retrieve",type="query",outcome="ok"}')!;
    expect(executed).toBeGreaterThan(0);
    expect(line!.durationMs).toBeGreaterThanOrEqual(executed * 1000 - 0.005);
    expect(log.lines.find((l) => l.requestId === refused.requestId)).toMatchObject({ status: 429, outcome: 'RATE_LIMITED' });
    const scrape = log.lines.filter((l) => l.msg === 'request' && l.path === '/metrics');
    expect(scrape.map((l) => l.status)).toEqual([200, 200]);
    expect(scrape[0].operation).toBeUndefined();
  });

  it('answers /healthz and /readyz, GET only', async () => {
    const health = await get(url, '/healthz');
    expect([health.status, health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await get(url, '/readyz');
    expect(ready.status).toBe(200);
    const { pool, ...report } = ready.json();
    expect(report).toEqual({
      status: 'ready',
      database: 'ok',
      storage: 'ok',
      migrations: 'ok',
      // Passage BM25's candidates: PGlite's BM25 index; the postings on PostgreSQL 15, which has none.
      bm25: process.env.DATABASE_URL ? 'postings' : 'pg_textsearch',
      models: 'absent',
      // Indexed, but no model has embedded the one document yet: owed, and still ready.
      pending: { unindexedPassages: 0, unembeddedPassages: 1, unembeddedDocuments: 1 },
      // No model is active: nothing of the corpus is covered.
      coverage: { documents: { total: 1, embedded: 0 }, passages: { total: 1, embedded: 0 }, queued: { jobs: 0, documents: 0, bytes: 0 } },
    });
    // PostgreSQL's pool, as readyz saw it (PGlite has none).
    if (t.kind === 'postgres') expect(pool).toEqual({ busy: expect.any(Number), idle: expect.any(Number), waiting: 0, max: expect.any(Number) });
    else expect(pool).toBeUndefined();
    const posted = await fetch(new URL('/healthz', url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });
});

// pendingWork itself is tested in test/pending-work.test.ts.

describe('readiness when the database is not ready', () => {
  it('answers 503 naming the migrations missing on an unmigrated database', async () => {
    const t = await createTestDatabase({ migrated: false });
    const log = captureLog();
    const { url, stop } = await startServer(t.db, loadConfig({ PORT: '0' }), undefined, { logDestination: log.destination });
    try {
      const ready = await get(url, '/readyz');
      expect(ready.status).toBe(503);
      const report = ready.json();
      expect(report).toMatchObject({ status: 'not ready', database: 'ok', pending: 'unknown' });
      expect(report.migrations.missing).toEqual(expect.arrayContaining(['0001_title_tree', '0007_bm25']));
      expect((await get(url, '/healthz')).status).toBe(200);
    } finally {
      await stop();
      await t.drop();
    }
  });

  it('answers 503 with database unavailable once the embedded database is closed, while /healthz stays 200', async () => {
    const db = await PgliteDatabase.open();
    await migrate(db);
    const log = captureLog();
    const { url, stop } = await startServer(db, loadConfig({ PORT: '0' }), undefined, { logDestination: log.destination });
    try {
      expect((await get(url, '/readyz')).status).toBe(200);
      await db.close();
      const ready = await get(url, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'not ready', database: 'unavailable', migrations: 'unknown' });
      expect((await get(url, '/healthz')).status).toBe(200);
      // Metrics still answer: process metrics, and the database reported down.
      const metrics = await get(url, '/metrics');
      expect(metrics.status).toBe(200);
      expect(sample(metrics.text, 'dhr_database_up')).toBe(0);
    } finally {
      await stop();
    }
  });

  onServer('PostgreSQL stopped and started again (a private server)', () => {
    it('goes 503 while PostgreSQL is down and 200 once it is back', async () => {
      const pg = await startPrivatePostgres();
      let db: Database | undefined;
      let stop: (() => Promise<void>) | undefined;
      try {
        db = new PostgresDatabase({ url: pg.url, connectTimeoutMs: 1000 });
        await migrate(db);
        const log = captureLog();
        let url: string;
        ({ url, stop } = await startServer(db, loadConfig({ PORT: '0' }), undefined, { logDestination: log.destination }));
        expect((await get(url, '/readyz')).status).toBe(200);
        await pg.stop();
        const down = await get(url, '/readyz');
        expect(down.status).toBe(503);
        expect(down.json()).toMatchObject({ database: 'unavailable' });
        expect((await get(url, '/healthz')).status).toBe(200);
        await pg.start();
        const up = await get(url, '/readyz');
        expect(up.status).toBe(200);
        expect(up.json()).toMatchObject({ status: 'ready', database: 'ok', migrations: 'ok' });
      } finally {
        await stop?.();
        await db?.close();
        await pg.destroy();
      }
    }, 120_000);
  });
});

describe('METRICS_ACCESS', () => {
  const t = useTestDatabase();

  it('follows READ_ACCESS=key unless set: /metrics needs a reader or admin key, /healthz and /readyz never do', async () => {
    const reader = await createApiKey(t.db, { role: 'reader', name: 'prometheus' });
    const log = captureLog();
    const { url, stop } = await startServer(t.db, loadConfig({ PORT: '0', READ_ACCESS: 'key' }), undefined, { logDestination: log.destination });
    const open = await startServer(t.db, loadConfig({ PORT: '0', READ_ACCESS: 'key', METRICS_ACCESS: 'public' }), undefined, {
      logDestination: log.destination,
    });
    try {
      const refused = await get(url, '/metrics');
      expect(refused.status).toBe(401);
      expect(refused.json().errors[0].extensions.code).toBe('UNAUTHENTICATED');
      expect((await get(url, '/metrics', { authorization: 'Bearer dhr_not-a-key' })).status).toBe(401);
      expect((await get(url, '/metrics', { authorization: `Bearer ${reader.key}` })).status).toBe(200);
      expect((await get(url, '/healthz')).status).toBe(200);
      expect((await get(url, '/readyz')).status).toBe(200);
      expect((await get(open.url, '/metrics')).status).toBe(200);
    } finally {
      await stop();
      await open.stop();
    }
  });
});
