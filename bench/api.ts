/**
 * npm run bench:api — what the GraphQL API costs on top of the SQL it runs.
 *
 * `retrieve` through the real server (`dhr serve` in a child process, HTTP + GraphQL, default mode
 * HYBRID_HIERARCHICAL) against the very same statements issued directly with `pg` (captured from
 * the product's own retrieve() for each question: src/retrieval/sql.ts searchStatement, same
 * settings, same parameters), with BENCH_CLIENTS (16) concurrent clients looping over the same
 * questions for BENCH_SECONDS (20) each. Both sides get the same connection budget (the server's
 * pool of 10; a pg.Pool of 10). Reports throughput of each, the API's share of direct throughput
 * (goal ≥ 70%), and p50/p99 latency of each (goal: p99 ≤ 4 × p50).
 *
 * Corpus: BENCH_DOCUMENTS (3000) synthetic documents of 6 passages, written by the product's ingest
 * into `dhr_bench_api` on DATABASE_URL's server (kept; BENCH_FRESH=1 reloads), embedded with a tiny
 * BERT-shaped ONNX model (test/helpers/tiny-model.ts, 64-d) so question encoding (reported) stays
 * small and the comparison measures the API, not the encoder.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { loadConfig } from '../src/config';
import { ingest } from '../src/pipeline/ingest';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { packageRoot } from '../src/paths';
import { retrieve } from '../src/retrieval/retrieve';
import { settingsStatement, type Database } from '../src/store/db';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { prng } from '../test/helpers/prng';
import { writeTinyModel } from '../test/helpers/tiny-model';
import { WORDS } from '../test/helpers/tiny-tokenizer';
import { databaseUrl, openBenchDatabase } from './database';

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DOCS = Number(process.env.BENCH_DOCUMENTS ?? 3000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 200);
const POOL = 10; // the server's pool (src/store/postgres.ts)
const NAME = 'dhr_bench_api';
const TEXT_WORDS = WORDS.filter((w) => /^[a-z]+$/.test(w));

function corpus(seed: number) {
  const rand = prng(seed);
  const words = (n: number) => Array.from({ length: n }, () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)]).join(' ');
  return Array.from({ length: DOCS }, (_, d) => ({
    key: `bench/${d}`,
    title: `${words(3)} ${d}`,
    abstract: `${words(20)} item${d}.`,
    sections: Array.from({ length: 5 }, (_, s) => ({ title: words(2), text: `${words(40)} item${d} part${s}.` })),
  }));
}

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
    const result = await ingest(db, corpus(7), { ...config.ingest, embedWith: async () => targets });
    console.log(`loaded ${result.created} documents, ${result.passages} passages, embedded (${targets.passage.name}) in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  const [{ passages }] = await db.query<{ passages: number }>('SELECT count(*)::int AS passages FROM passages');

  // The questions, and the statement retrieve() sends for each (captured on the way to the database).
  const rand = prng(11);
  const questions = Array.from({ length: QUESTIONS }, (_, i) =>
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

  // API: the real server in its own process.
  const server = spawn(process.execPath, ['--import', 'tsx', join(packageRoot(), 'src/cli/main.ts'), 'serve', '--port', '0'], {
    cwd: packageRoot(),
    env: { ...process.env, DATABASE_URL: url, ENCODER: modelDir, RATE_LIMIT_QUERIES: '0', JOB_WORKERS: '0', ENCODER_THREADS: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /ready at (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.once('exit', () => reject(new Error('server exited')));
  });
  const query = 'query($q: String!) { retrieve(question: $q, k1: 100, k2: 20) { passages { rank score passage { id } } } }';
  const api = async (i: number) => {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables: { q: questions[i] } }),
    });
    const body = (await res.json()) as { errors?: unknown[] };
    if (!res.ok || body.errors) throw new Error(`API error: ${JSON.stringify(body).slice(0, 300)}`);
  };

  try {
    // Warm both paths (connections, plans, JIT), then measure direct, API, direct again.
    await load(CLIENTS, 3, direct);
    await load(CLIENTS, 3, api);
    const d1 = await load(CLIENTS, SECONDS, direct);
    const a = await load(CLIENTS, SECONDS, api);
    const d2 = await load(CLIENTS, SECONDS, direct);
    const dRate = (d1.rate + d2.rate) / 2;
    const row = (label: string, r: { count: number; latencies: number[]; rate: number }) => {
      const p50 = percentile(r.latencies, 0.5);
      const p99 = percentile(r.latencies, 0.99);
      console.log(`${label.padEnd(30)} ${r.rate.toFixed(1).padStart(8)} q/s  p50 ${p50.toFixed(2).padStart(7)} ms  p99 ${p99.toFixed(2).padStart(7)} ms  p99/p50 ${(p99 / p50).toFixed(2)}  (${r.count} queries)`);
    };
    console.log(`\nbench:api — ${DOCS} documents, ${passages} passages, ${targets.passage.name} (${targets.passage.dimension}-d), HYBRID_HIERARCHICAL k1=100 k2=20, ${CLIENTS} clients × ${SECONDS} s, pools of ${POOL}`);
    console.log(`question encoding in retrieve(): ${(encodeMs / QUESTIONS).toFixed(2)} ms mean (in the API path only)`);
    row('direct pg (before)', d1);
    row('GraphQL over HTTP', a);
    row('direct pg (after)', d2);
    console.log(`API throughput / direct: ${((a.rate / dRate) * 100).toFixed(1)}% (goal ≥ 70%)`);
  } finally {
    server.kill('SIGTERM');
    await pool.end();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
