/**
 * Read replicas against a real streaming standby (scripts/replica-cluster.sh start; .ci/run does
 * it): queries read from the standby, the admin who just ingested reads their write at once, a
 * lagging or stopped standby is skipped without a hang.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { loadConfig, type Config } from '../../src/config';
import { startServer } from '../../src/server';
import { EncoderSet } from '../../src/encoders/set';
import { ModelRegistry } from '../../src/pipeline/jobs/registry';
import { activateModel } from '../../src/store/active';
import { createApiKey } from '../../src/store/keys';
import { migrate } from '../../src/store/migrate';
import { openReplicas } from '../../src/store/open';
import { PostgresDatabase } from '../../src/store/postgres';
import type { ReplicaSet } from '../../src/store/replicas';
import { withDatabase } from '../helpers/database';
import { captureLog } from '../helpers/log-capture';
import { startServe } from '../helpers/serve';
import { syntheticModel } from '../helpers/synthetic-model';

const run = promisify(execFile);
const PRIMARY = process.env.REPLICA_PRIMARY_URL;
const STANDBY = process.env.REPLICA_STANDBY_URL;
if (!PRIMARY || !STANDBY) {
  // No silent skip: this suite exists to run against a replica.
  throw new Error('set REPLICA_PRIMARY_URL and REPLICA_STANDBY_URL (scripts/replica-cluster.sh start prints both)');
}
const CLUSTER = join(__dirname, '../../scripts/replica-cluster.sh');

// A database of this run's own on the primary; CREATE DATABASE replicates, so the standby has it too.
const name = `replica_run_${process.pid}`;
const primaryUrl = withDatabase(PRIMARY, name);
const standbyUrl = withDatabase(STANDBY, name);

async function sql<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Polls until check() is true. A check that throws counts as "not yet": the standby answers
 * "database … does not exist" until it has replayed the CREATE DATABASE (a local .ci/run once
 * failed every test in beforeAll so); the last error is in the timeout's message.
 */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Served {
  url: string;
  replicas: ReplicaSet;
  log: ReturnType<typeof captureLog>;
  stop(): Promise<void>;
}

let db: PostgresDatabase;
let adminKey: string;
let readerKey: string;
const servers: Served[] = [];

async function serve(env: Record<string, string>, models?: ModelRegistry): Promise<Served> {
  const config: Config = loadConfig({ PORT: '0', DATABASE_URL: primaryUrl, DATABASE_READ_URL: standbyUrl, REPLICA_CHECK_MS: '50', ...env });
  const replicas = (await openReplicas(db, config))!;
  const log = captureLog();
  const { url, stop } = await startServer(db, config, models, { replicas, logDestination: log.destination });
  const served = {
    url,
    replicas,
    log,
    stop: async () => {
      await stop();
      await replicas.close();
    },
  };
  servers.push(served);
  return served;
}

async function post(url: string, query: string, key?: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query }) });
  return { status: response.status, body: await response.json() };
}

const ingest = (url: string, title: string) =>
  post(
    url,
    `mutation { ingestDocuments(documents: [{ key: "${title}", title: "${title}", text: "The ${title} report: quarterly figures." }]) { created } }`,
    adminKey,
  );

/** Titles a query finds, through the navigation and the retrieval paths both. */
async function seen(url: string, title: string, key?: string): Promise<{ listed: boolean; retrieved: boolean }> {
  const reply = await post(
    url,
    `{ documents(titleContains: "${title}") { edges { node { title sections { title } } } } retrieve(question: "${title} report", mode: LEXICAL, k2: 5) { passages { passage { document { title } } } coverage { passages { total } } } stats { documents pending { unindexedPassages } } }`,
    key,
  );
  expect(reply.status).toBe(200);
  expect(reply.body.errors).toBeUndefined();
  return {
    listed: reply.body.data.documents.edges.some((e: any) => e.node.title === title),
    retrieved: reply.body.data.retrieve.passages.some((p: any) => p.passage.document.title === title),
  };
}

async function metric(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(new URL('/metrics', url))).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found ? Number(found.split(' ').pop()) : 0;
}

const onStandby = async (title: string) => (await sql(standbyUrl, `SELECT 1 FROM documents WHERE title = '${title}'`)).length > 0;

beforeAll(async () => {
  await sql(PRIMARY, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await sql(PRIMARY, `CREATE DATABASE ${name}`);
  await sql(primaryUrl, 'CREATE EXTENSION IF NOT EXISTS vector');
  db = new PostgresDatabase({ url: primaryUrl });
  await migrate(db);
  adminKey = (await createApiKey(db, { role: 'admin', name: 'ingesting admin' })).key;
  readerKey = (await createApiKey(db, { role: 'reader', name: 'reader' })).key;
  await until('the standby to replay the migrations', async () => (await sql(standbyUrl, "SELECT to_regclass('api_keys') IS NOT NULL AS ok"))[0].ok === true);
});

afterEach(async () => {
  // Whatever a test did to the standby, the next one starts with it running and replaying.
  await run(CLUSTER, ['start-standby']).catch(() => undefined);
  await until('the standby to answer', async () =>
    sql(STANDBY, 'SELECT 1').then(
      () => true,
      () => false,
    ),
  );
  await sql(STANDBY, 'SELECT pg_wal_replay_resume()');
});

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  await db?.close();
  await sql(PRIMARY, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
});

describe('DATABASE_READ_URL with a streaming standby', () => {
  test('queries read the standby; the admin who ingested reads the write at once; everyone once replay resumes', async () => {
    const s = await serve({ REPLICA_MAX_LAG_MS: '600000' });
    expect((await ingest(s.url, 'Alpha')).body.data.ingestDocuments.created).toBe(1);
    await until('Alpha on the standby', () => onStandby('Alpha'));

    await sql(STANDBY, 'SELECT pg_wal_replay_pause()');
    expect((await ingest(s.url, 'Beta')).body.data.ingestDocuments.created).toBe(1);
    expect(await sql(primaryUrl, "SELECT 1 FROM documents WHERE title = 'Beta'")).toHaveLength(1);

    // Anonymous and another key read the paused standby: Beta is not there yet, Alpha is. (On a
    // machine too busy to check the standby in time, reads would go to the primary: wait for it.)
    await until('the standby to be checked', async () => s.replicas.forRead().reason === 'replica');
    expect(await seen(s.url, 'Beta')).toEqual({ listed: false, retrieved: false });
    expect(await seen(s.url, 'Beta', readerKey)).toEqual({ listed: false, retrieved: false });
    expect(await seen(s.url, 'Alpha')).toEqual({ listed: true, retrieved: true });
    // The admin who wrote it reads from the primary until the standby has replayed the write.
    expect(await seen(s.url, 'Beta', adminKey)).toEqual({ listed: true, retrieved: true });
    expect(await metric(s.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/)).toBeGreaterThanOrEqual(2);
    expect(await metric(s.url, /^dhr_read_routes_total\{target="primary",reason="read-your-writes"\}/)).toBeGreaterThanOrEqual(1);
    // Admin views of keys stay on the primary: the reader key made after the pause is listed.
    await createApiKey(db, { role: 'reader', name: 'made while paused' });
    const keys = await post(s.url, '{ apiKeys { name } }', adminKey);
    expect(keys.body.data.apiKeys.map((k: any) => k.name)).toContain('made while paused');

    await sql(STANDBY, 'SELECT pg_wal_replay_resume()');
    await until('Beta for everyone', async () => (await seen(s.url, 'Beta')).listed);
    expect(await seen(s.url, 'Beta')).toEqual({ listed: true, retrieved: true });
    expect(await seen(s.url, 'Beta', adminKey)).toEqual({ listed: true, retrieved: true });
  });

  test('a standby further behind than REPLICA_MAX_LAG_MS is skipped, logged, reported, and used again once caught up', async () => {
    const s = await serve({ REPLICA_MAX_LAG_MS: '3000' });
    await sql(STANDBY, 'SELECT pg_wal_replay_pause()');
    await ingest(s.url, 'Gamma');
    // Within the bound the standby still serves: anonymous readers do not see Gamma yet.
    await until('the standby to be checked', async () => s.replicas.forRead().reason === 'replica');
    expect((await seen(s.url, 'Gamma')).listed).toBe(false);
    await until('the standby to count as lagging', async () => s.replicas.report()[0].status === 'lagging');
    expect(await seen(s.url, 'Gamma')).toEqual({ listed: true, retrieved: true });
    expect(await metric(s.url, /^dhr_read_routes_total\{target="primary",reason="no healthy replica"\}/)).toBeGreaterThanOrEqual(1);
    const metrics = await (await fetch(new URL('/metrics', s.url))).text();
    expect(metrics).toMatch(/^dhr_replica_up\{replica="127\.0\.0\.1:\d+\/replica_run_\d+",status="lagging"\} 0$/m);
    expect(metrics).toMatch(/^dhr_replica_lag_seconds\{replica="127\.0\.0\.1:\d+\/replica_run_\d+"\} ([3-9]|\d\d)/m);
    const warning = s.log.lines.find((l) => l.level === 40 && l.replica === s.replicas.replicas[0].name && l.to === 'lagging');
    expect(warning?.msg).toMatch(/is skipped \(lagging\).*REPLICA_MAX_LAG_MS \(3000 ms\)/);
    const ready = await fetch(new URL('/readyz', s.url));
    expect(ready.status).toBe(200);
    const report = await ready.json();
    expect(report.replicas).toEqual([expect.objectContaining({ name: s.replicas.replicas[0].name, status: 'lagging' })]);
    expect(report.replicas[0].lagMs).toBeGreaterThan(3000);

    await sql(STANDBY, 'SELECT pg_wal_replay_resume()');
    await until('the standby to serve again', async () => s.replicas.report()[0].status === 'ok');
    expect(s.log.lines.some((l) => l.level === 30 && l.to === 'ok' && /serves reads again/.test(l.msg))).toBe(true);
    const before = await metric(s.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/);
    await seen(s.url, 'Gamma');
    expect(await metric(s.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/)).toBe(before + 1);
  });

  test('the standby stopped under load: every query is answered from the primary, none hangs; it is used again once back', async () => {
    const s = await serve({ REPLICA_MAX_LAG_MS: '600000' });
    await ingest(s.url, 'Delta');
    await until('Delta on the standby', () => onStandby('Delta'));
    let stopping = true;
    const replies: Array<{ status: number; body: any }> = [];
    // Eight clients read while the standby goes down: queries in flight on it are run again on the primary.
    const clients = Array.from({ length: 8 }, async () => {
      while (stopping) replies.push(await post(s.url, '{ documents(titleContains: "Delta") { edges { node { title } } } }'));
    });
    await new Promise((r) => setTimeout(r, 200));
    await run(CLUSTER, ['stop-standby']);
    await until('the standby to count as down', async () => s.replicas.report()[0].status === 'down');
    await new Promise((r) => setTimeout(r, 500));
    stopping = false;
    await Promise.all(clients);
    expect(replies.length).toBeGreaterThan(8);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.body.errors).toBeUndefined();
      expect(reply.body.data.documents.edges).toEqual([{ node: { title: 'Delta' } }]);
    }
    // None hangs: a query stuck on the stopped standby would hold Promise.all above until the test's
    // timeout. How long the fallback takes is not asserted (a shared machine's timing).
    const ready = await (await fetch(new URL('/readyz', s.url))).json();
    expect(ready.status).toBe('ready');
    expect(ready.replicas[0]).toMatchObject({ status: 'down', problem: 'it cannot be reached' });
    expect(JSON.stringify(ready)).not.toMatch(/ECONNREFUSED|password/);
    const fellBack = await metric(s.url, /^dhr_read_routes_total\{target="primary",reason="no healthy replica"\}/);
    expect(fellBack).toBeGreaterThan(0);

    await run(CLUSTER, ['start-standby']);
    await until('the standby to serve again', async () => s.replicas.report()[0].status === 'ok');
    const before = await metric(s.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/);
    expect((await seen(s.url, 'Delta')).listed).toBe(true);
    expect(await metric(s.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/)).toBe(before + 1);
  });

  test('dhr serve opens the replicas from DATABASE_READ_URL, reports them, reads from them, and closes them on SIGTERM', async () => {
    const serveProcess = await startServe({ DATABASE_URL: primaryUrl, DATABASE_READ_URL: standbyUrl, REPLICA_CHECK_MS: '50', EMBED_ON_INGEST: 'false' });
    try {
      const replica = new URL(standbyUrl);
      // Start-up waits a few checks for a replica that is a moment behind; a busy machine may take longer.
      expect(serveProcess.stderr()).toMatch(new RegExp(`read replica: 127\\.0\\.0\\.1:${replica.port}/${name} \\((ok|lagging)`));
      await until('/readyz to report the replica ok', async () => {
        const ready = await (await fetch(new URL('/readyz', serveProcess.url))).json();
        return ready.replicas?.[0]?.status === 'ok';
      });
      const ready = await (await fetch(new URL('/readyz', serveProcess.url))).json();
      expect(ready.replicas).toEqual([expect.objectContaining({ name: `127.0.0.1:${replica.port}/${name}`, status: 'ok' })]);
      await until('a read routed to the standby', async () => {
        expect((await post(serveProcess.url, '{ documents(first: 1) { edges { node { title } } } }')).body.errors).toBeUndefined();
        return (await metric(serveProcess.url, /^dhr_read_routes_total\{target="replica",reason="replica"\}/)) > 0;
      });
    } finally {
      serveProcess.child.kill('SIGTERM');
    }
    expect(await serveProcess.exited).toEqual({ code: 0, signal: null });
  });

  test("a standby of a Citus primary sends search settings as the primary does: SET LOCAL in the statement's transaction", async () => {
    // Citus propagates only SET LOCAL to the shards (store/db.ts localSettingsStatement); a standby
    // of a coordinator plans distributed statements too. Marking a plain primary distributed is
    // enough to see which way the standby's pool sends them: SET LOCAL leaves the session as it was.
    const primary = new PostgresDatabase({ url: primaryUrl });
    primary.distributed = 'citus';
    const config = loadConfig({ DATABASE_URL: primaryUrl, DATABASE_READ_URL: standbyUrl, REPLICA_CHECK_MS: '50', DB_POOL_MAX: '1' });
    const replicas = (await openReplicas(primary, config))!;
    try {
      await until('the standby to be chosen', async () => replicas.forRead().reason === 'replica');
      const standby = replicas.forRead().db;
      const setting = "SELECT current_setting('work_mem') AS v, pg_is_in_recovery() AS standby";
      const during = await standby.queryWithSettings<{ v: string; standby: boolean }>({ work_mem: '7MB' }, setting);
      expect(during).toEqual([{ v: '7MB', standby: true }]);
      // One pooled connection: a session setting would still be there.
      expect(await standby.query<{ v: string; standby: boolean }>(setting)).toEqual([{ v: '4MB', standby: true }]);
    } finally {
      await replicas.close();
      await primary.close();
    }
  });

  test('dhr serve refuses DATABASE_READ_URL without DATABASE_URL: exit 1, naming both settings', async () => {
    await expect(startServe({ DATABASE_READ_URL: standbyUrl, DATA_DIR: '/nonexistent/never-created' })).rejects.toThrow(
      /exited with 1: DATABASE_READ_URL needs DATABASE_URL/,
    );
  });

  // Last: it leaves synthetic models (no files) active, which `dhr serve` could not load.
  test('a model activation: the server reads it from the primary, and no query reads a standby that has not replayed it', async () => {
    // Both models loaded, one per level, so switching the document roles needs nothing from disk.
    const a = syntheticModel('replica-model-a', 8);
    const b = syntheticModel('replica-model-b', 8);
    const models = await ModelRegistry.of(db, EncoderSet.of({ questionDocument: a, document: a, questionPassage: b, passage: b }), { ttlMs: 0 });
    try {
      const s = await serve({ REPLICA_MAX_LAG_MS: '600000' }, models);
      await until('the standby to be current', async () => s.replicas.forRead().reason === 'replica');
      await sql(STANDBY, 'SELECT pg_wal_replay_pause()');
      // Another process (dhr, another server) switches the document roles on the primary.
      await activateModel(db, 'replica-model-b', ['questionDocument', 'document'], { bootstrap: true });
      const routed = () => metric(s.url, /^dhr_read_routes_total\{target="primary",reason="read-your-writes"\}/);
      const before = await routed();
      // LEXICAL needs no encoding; the query still takes the new assignment, so it must not read the paused standby.
      const reply = await post(s.url, '{ retrieve(question: "report", mode: LEXICAL) { mode } }');
      expect(reply.body.errors).toBeUndefined();
      expect(await routed()).toBe(before + 1);
      expect((await models.current())?.document.name).toBe('replica-model-b');
      await sql(STANDBY, 'SELECT pg_wal_replay_resume()');
      await until('the standby to pass the activation', async () => s.replicas.forRead().reason === 'replica');
    } finally {
      await models.close();
    }
  });
});
