/**
 * npm run bench:api — the API end to end (HTTP + GraphQL + encode + SQL + rows) against the SQL alone.
 *
 * `retrieve` through the real server (`dhr serve` in a child process, default mode
 * HYBRID_HIERARCHICAL, a selection with passage text and document title) against the very same
 * search statements issued directly with `pg` (captured from the product's own retrieve() for each
 * question: pre-encoded, same settings, same parameters). BENCH_CLIENTS (1,16) concurrent clients
 * loop over BENCH_QUESTIONS (200) questions for BENCH_SECONDS (10) each. Both sides get pools of the
 * server's default size (defaultPoolSize: 2 per core). Servers, one after the other:
 * - baseline: the tree at BENCH_BASELINE_ROOT (e.g. an export of main), when set;
 * - this tree with QUESTION_CACHE=0 (every question encoded: the figure that counts);
 * - this tree with QUESTION_CACHE=0 QUESTION_BATCH=1 (no micro-batching), 16 clients only;
 * - this tree with the default cache (questions repeat: an upper bound on what it saves).
 * Per run: throughput, p50/p99, the API's share of direct throughput (goal ≥ 70%), the stages from
 * the response's timings (encode, search; the rest is HTTP + GraphQL + rows), and the server's CPU
 * per request (/proc): the whole process, and its main thread alone — everything but the model
 * (goal ≤ 3 ms excluding the encoder).
 *
 * BENCH_PROFILE=dir: each server writes a V8 CPU profile (.cpuprofile) into dir when it stops.
 * Corpus: BENCH_DOCUMENTS (3000) synthetic documents of 6 passages, written by the product's ingest
 * into BENCH_DATABASE (dhr_bench_api) on DATABASE_URL's server (kept; BENCH_FRESH=1 reloads),
 * embedded with a tiny BERT-shaped ONNX model (test/helpers/tiny-model.ts, 64-d) so the comparison
 * measures the API, not the encoder (bench:encoder measures USE-lite).
 */
import 'reflect-metadata';
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { defaultPoolSize, loadConfig } from '../src/config';
import { ingest } from '../src/pipeline/ingest';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { packageRoot } from '../src/paths';
import { retrieve } from '../src/retrieval/retrieve';
import { settingsStatement, type Database } from '../src/store/db';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { prng } from '../test/helpers/prng';
import { inheritedEnv, startServe } from '../test/helpers/serve';
import { writeTinyModel } from '../test/helpers/tiny-model';
import { apiCorpus, TEXT_WORDS } from './api-corpus';
import { databaseUrl, openBenchDatabase } from './database';

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DOCS = Number(process.env.BENCH_DOCUMENTS ?? 3000);
const CLIENTS = (process.env.BENCH_CLIENTS ?? '1,16').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 200);
const POOL = defaultPoolSize(availableParallelism()); // the server's default pool (DB_POOL_MAX)
const NAME = process.env.BENCH_DATABASE ?? 'dhr_bench_api';
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT;
/** BENCH_PROFILE=dir: every server writes a V8 CPU profile there when it stops (where the main thread's time goes). */
const profileArgs = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

async function load(clients: number, seconds: number, one: (i: number) => Promise<void>): Promise<{ count: number; latencies: number[]; rate: number }> {
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        const i = next++ % QUESTIONS;
        const t = process.hrtime.bigint();
        await one(i);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, latencies, rate: latencies.length / elapsed };
}

async function main(): Promise<void> {
  console.log(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const fresh = process.env.BENCH_FRESH === '1';
  const work = mkdtempSync(join(tmpdir(), 'dhr-bench-api-'));
  const modelDir = await writeTinyModel(work, 'bench-tiny-64', { hidden: 64 });
  const loader = await openBenchDatabase(baseUrl, NAME, fresh);
  await loader.close();
  const url = databaseUrl(baseUrl, NAME);
  const db = new PostgresDatabase({ url, maxConnections: 4 });
  await migrate(db);
  const config = loadConfig({ ENCODER: modelDir, DATABASE_URL: url });
  const models = await ModelRegistry.open(db, { encoders: config.encoders });
  const targets = (await models.current())!;
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
  if (n < DOCS) {
    const t = Date.now();
    const result = await ingest(db, apiCorpus(DOCS, 7), { ...config.ingest, embedWith: async () => targets });
    console.log(
      `loaded ${result.created} documents, ${result.passages} passages, embedded (${targets.passage.name}) in ${((Date.now() - t) / 1000).toFixed(0)} s`,
    );
  }
  const [{ passages }] = await db.query<{ passages: number }>('SELECT count(*)::int AS passages FROM passages');

  // The questions, and the statement retrieve() sends for each (captured on the way to the database).
  const rand = prng(11);
  const questions = Array.from(
    { length: QUESTIONS },
    (_, i) =>
      `${Array.from({ length: 4 }, () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)]).join(' ')} item${Math.floor(rand() * DOCS)}${i % 3 ? '' : ' part2'}`,
  );
  const statements: { settings: Record<string, string>; sql: string; params: readonly unknown[] }[] = [];
  let encodeMs = 0;
  for (const question of questions) {
    const capture: Database = Object.create(db, {
      queryWithSettings: {
        value: (settings: Record<string, string>, sql: string, params: readonly unknown[]) => {
          statements.push({ settings, sql, params });
          return db.queryWithSettings(settings, sql, params);
        },
      },
    });
    encodeMs += (await retrieve(capture, targets, { question, k1: 100, k2: 20 })).timings.encodeMs;
  }
  await models.close();
  await db.close();

  // Direct: the same statements on a pool of the server's size; settings once per connection (they are the same for every question).
  const pool = new Pool({ connectionString: url, max: POOL });
  const settings = settingsStatement(statements[0].settings);
  pool.on('connect', (client) => void client.query(settings.sql, settings.params));
  const direct = async (i: number) => {
    await pool.query(statements[i].sql, statements[i].params as unknown[]);
  };

  const query = `query($q: String!) { retrieve(question: $q, k1: 100, k2: 20) {
    timings { encodeMs searchMs totalMs } passages { rank score passage { id text document { title } } } } }`;
  interface Stages {
    encodeMs: number[];
    searchMs: number[];
    totalMs: number[];
  }
  const apiFor = (endpoint: string, stages: Stages) => async (i: number) => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables: { q: questions[i] } }),
    });
    const body = (await res.json()) as { errors?: unknown[]; data?: { retrieve: { timings: { encodeMs: number; searchMs: number; totalMs: number } } } };
    if (!res.ok || body.errors) throw new Error(`API error: ${JSON.stringify(body).slice(0, 300)}`);
    const t = body.data!.retrieve.timings;
    stages.encodeMs.push(t.encodeMs);
    stages.searchMs.push(t.searchMs);
    stages.totalMs.push(t.totalMs);
  };

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  /** CPU seconds used so far (utime + stime from /proc, clock ticks of 100 Hz): the process, or one of its threads. */
  const cpuS = (path: string) => {
    const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
  // The main thread runs HTTP, GraphQL, JSON, pg's protocol and tokenizing; onnxruntime runs the
  // model on other threads (libuv's pool and its own), with V8's GC and compiler helpers.
  const serverCpu = (pid: number) => ({ process: cpuS(`/proc/${pid}/stat`), main: cpuS(`/proc/${pid}/task/${pid}/stat`) });

  const rows: string[] = [];
  const row = (label: string, clients: number, r: { count: number; latencies: number[]; rate: number }, directRate: number, extra = '') => {
    const p50 = percentile(r.latencies, 0.5);
    const p99 = percentile(r.latencies, 0.99);
    const line = `${label.padEnd(34)} ${String(clients).padStart(3)} ${r.rate.toFixed(1).padStart(8)} q/s  p50 ${p50.toFixed(2).padStart(7)} ms  p99 ${p99.toFixed(2).padStart(7)} ms  vs direct ${((r.rate / directRate) * 100).toFixed(1).padStart(5)}%${extra}`;
    rows.push(line);
    console.log(line);
  };

  // Direct SQL first, per client count (averaged over a run before and after the API runs).
  const directRates = new Map<number, { before: Awaited<ReturnType<typeof load>> }>();
  await load(Math.max(...CLIENTS), 3, direct);
  for (const c of CLIENTS) directRates.set(c, { before: await load(c, SECONDS, direct) });
  for (const c of CLIENTS) row('direct pg (pre-encoded)', c, directRates.get(c)!.before, directRates.get(c)!.before.rate);

  const servers: { label: string; root: string; env: Record<string, string>; clients: number[] }[] = [
    ...(BASELINE_ROOT ? [{ label: 'API baseline (BENCH_BASELINE_ROOT)', root: BASELINE_ROOT, env: {}, clients: CLIENTS }] : []),
    { label: 'API, no cache', root: packageRoot(), env: { QUESTION_CACHE: '0' }, clients: CLIENTS },
    {
      label: 'API, no cache, no micro-batching',
      root: packageRoot(),
      env: { QUESTION_CACHE: '0', QUESTION_BATCH: '1' },
      clients: CLIENTS.filter((c) => c > 1),
    },
    { label: 'API, cache (questions repeat)', root: packageRoot(), env: {}, clients: CLIENTS.filter((c) => c > 1) },
  ];
  try {
    for (const s of servers) {
      if (s.clients.length === 0) continue;
      const server = await startServe(
        {
          ...inheritedEnv(),
          DATABASE_URL: url,
          ENCODER: modelDir,
          RATE_LIMIT_QUERIES: '0',
          JOB_WORKERS: '0',
          ENCODER_THREADS: '1',
          LOG_LEVEL: 'warn',
          ...s.env,
        },
        110_000,
        { root: s.root, nodeArgs: profileArgs },
      );
      const endpoint = server.url;
      try {
        await load(Math.max(...s.clients), 3, apiFor(endpoint, { encodeMs: [], searchMs: [], totalMs: [] }));
        for (const c of s.clients) {
          const stages: Stages = { encodeMs: [], searchMs: [], totalMs: [] };
          const cpu0 = serverCpu(server.child.pid!);
          const r = await load(c, SECONDS, apiFor(endpoint, stages));
          const cpu1 = serverCpu(server.child.pid!);
          const cpuMsPerRequest = ((cpu1.process - cpu0.process) * 1000) / r.count;
          const mainMsPerRequest = ((cpu1.main - cpu0.main) * 1000) / r.count;
          const p50 = percentile(r.latencies, 0.5);
          row(
            s.label,
            c,
            r,
            directRates.get(c)!.before.rate,
            `  stages p50: encode ${median(stages.encodeMs).toFixed(2)} search ${median(stages.searchMs).toFixed(2)} rest ${(p50 - median(stages.totalMs)).toFixed(2)} ms;` +
              ` server CPU ${cpuMsPerRequest.toFixed(2)} ms/req, main thread ${mainMsPerRequest.toFixed(2)}`,
          );
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    }
    for (const c of CLIENTS) {
      const after = await load(c, SECONDS, direct);
      row('direct pg (after)', c, after, directRates.get(c)!.before.rate);
    }
  } finally {
    await pool.end();
  }
  console.log(
    `\nbench:api — ${DOCS} documents, ${passages} passages, ${targets.passage.name} (${targets.passage.dimension}-d), HYBRID_HIERARCHICAL k1=100 k2=20, ${SECONDS} s per run, pools of ${POOL}, ${availableParallelism()} cores`,
  );
  console.log(
    `question encoding in retrieve() (tiny model, alone): ${(encodeMs / QUESTIONS).toFixed(2)} ms mean; load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(rows.join('\n'));
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
