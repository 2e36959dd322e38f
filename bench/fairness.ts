/**
 * npm run bench:fairness — small readers beside one heavy operation.
 *
 * BENCH_READERS (8) clients loop a small retrieve (`k1: 10, k2: 5`, LEXICAL, two rare terms) through the real HTTP
 * server (startServer, in a child process: fairness-server.ts) for BENCH_SECONDS (10): first alone, then while one more
 * client loops the heaviest operation the limits let through (MAX_RETRIEVES = 10 aliased retrievals
 * whose k1 × k2 sum to MAX_RETRIEVAL_WORK, passage text selected). Printed: the readers' p50/p99
 * alone and beside the heavy client, and their ratio (goal: p99 ≤ 2× alone), once with an
 * operation allowed the whole pool (DB_CONNECTIONS_PER_REQUEST = DB_POOL_MAX, what every operation
 * had before) and once with the default share; and beside a client looping the issue's own request
 * (20 aliases at k1 = k2 = 1000, which the limits now refuse: the column counts its answers by
 * code). LEXICAL: no encoder, so the pool is what is measured.
 *
 * Corpus: BENCH_DOCUMENTS (3000) synthetic documents of 6 passages (api-corpus.ts) written by the product's ingest
 * into BENCH_DATABASE (dhr_bench_fairness) on DATABASE_URL's server (kept; BENCH_FRESH=1 reloads).
 */
import 'reflect-metadata';
import { availableParallelism, loadavg } from 'node:os';
import { defaultConnectionShare, defaultPoolSize, loadConfig } from '../src/config';
import { ingest } from '../src/pipeline/ingest';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { packageRoot } from '../src/paths';
import { prng } from '../test/helpers/prng';
import { apiCorpus, TEXT_WORDS } from './api-corpus';
import { databaseUrl, openBenchDatabase } from './database';

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DOCS = Number(process.env.BENCH_DOCUMENTS ?? 3000);
const READERS = Number(process.env.BENCH_READERS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const NAME = process.env.BENCH_DATABASE ?? 'dhr_bench_fairness';
const POOL = defaultPoolSize(availableParallelism());
/** The issue's request: 20 aliased retrievals at k1 = k2 = 1000 (the limits refuse it now). */
const STARVING = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: retrieve(question: "capital city and harbor number ${i}", k1: 1000, k2: 1000, mode: LEXICAL) { passages { rank score passage { id text } } }`).join(' ')} }`;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

async function post(url: string, query: string, variables?: unknown): Promise<{ status: number; errors?: { extensions?: { code?: string } }[] }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { errors?: { extensions?: { code?: string } }[] };
  return { status: response.status, errors: body.errors };
}

interface Phase {
  p50: number;
  p99: number;
  count: number;
  failed: number;
  failedBy: Record<string, number>;
  heavy: number;
  heavyFailed: Record<string, number>;
}

async function phase(url: string, questions: string[], heavyQuery: string | undefined): Promise<Phase> {
  const small = `query($q: String!) { retrieve(question: $q, k1: 10, k2: 5, mode: LEXICAL) { passages { rank passage { id } } } }`;
  const end = Date.now() + SECONDS * 1000;
  const latencies: number[] = [];
  let failed = 0;
  const failedBy: Record<string, number> = {};
  let heavy = 0;
  const heavyFailed: Record<string, number> = {};
  let next = 0;
  const readers = Array.from({ length: READERS }, async () => {
    while (Date.now() < end) {
      const t = process.hrtime.bigint();
      const r = await post(url, small, { q: questions[next++ % questions.length] });
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (r.status !== 200 || r.errors) {
        failed++;
        const code = r.errors?.[0]?.extensions?.code ?? `HTTP ${r.status}`;
        failedBy[code] = (failedBy[code] ?? 0) + 1;
      }
    }
  });
  const heavyClient = heavyQuery
    ? (async () => {
        while (Date.now() < end) {
          const r = await post(url, heavyQuery);
          heavy++;
          for (const e of r.errors ?? []) heavyFailed[e.extensions?.code ?? 'unknown'] = (heavyFailed[e.extensions?.code ?? 'unknown'] ?? 0) + 1;
        }
      })()
    : Promise.resolve();
  await Promise.all([...readers, heavyClient]);
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), count: latencies.length, failed, failedBy, heavy, heavyFailed };
}

/** The readers' failures by code, when there were any. */
function failedNote(...phases: Phase[]): string {
  const by: Record<string, number> = {};
  for (const p of phases) for (const [code, n] of Object.entries(p.failedBy)) by[code] = (by[code] ?? 0) + n;
  return Object.keys(by).length ? ` (${JSON.stringify(by)})` : '';
}

/** The server in a process of its own (fairness-server.ts), with this share of the pool per operation. */
async function startServerProcess(dbUrl: string, share: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(packageRoot(), 'bench', 'fairness-server.ts')], {
    env: {
      ...process.env,
      FAIRNESS_DB_URL: dbUrl,
      FAIRNESS_POOL: String(POOL),
      DB_POOL_MAX: String(POOL),
      DB_CONNECTIONS_PER_REQUEST: String(share),
      LOG_LEVEL: 'error',
      // Every client here comes from 127.0.0.1, one address's budget: off, as for 9 separate clients.
      RATE_LIMIT_QUERIES: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return {
    url: line.trim(),
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function main(): Promise<void> {
  console.log(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${availableParallelism()} cores, pool ${POOL}`,
  );
  const loader = await openBenchDatabase(baseUrl, NAME, process.env.BENCH_FRESH === '1');
  await loader.close();
  const url = databaseUrl(baseUrl, NAME);
  const db = new PostgresDatabase({ url, maxConnections: POOL });
  await migrate(db);
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
  if (n < DOCS) {
    const t = Date.now();
    const result = await ingest(db, apiCorpus(DOCS, 7), { ...loadConfig({}).ingest });
    console.log(`loaded ${result.created} documents, ${result.passages} passages in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  }
  const rand = prng(11);
  // Readers ask for one document's part by its rare terms (a short postings walk); the heavy
  // operation's questions are common words, whose long postings lists are the expensive case.
  const questions = Array.from({ length: 200 }, () => `item${Math.floor(rand() * DOCS)} part${Math.floor(rand() * 5)}`);
  const heavyQuestions = Array.from({ length: 10 }, () => Array.from({ length: 4 }, () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)]).join(' '));

  const limits = loadConfig({});
  const k2 = Math.floor(limits.maxRetrievalWork / limits.maxRetrieves / 1000);
  const heavyQuery = `{ ${Array.from({ length: limits.maxRetrieves }, (_, i) => `a${i}: retrieve(question: "${heavyQuestions[i % heavyQuestions.length]}", k1: 1000, k2: ${k2}, mode: LEXICAL) { passages { rank score passage { id text } } }`).join(' ')} }`;
  console.log(`heavy operation: ${limits.maxRetrieves} aliased retrievals, k1 = 1000, k2 = ${k2} (k1 × k2 in all: ${limits.maxRetrieves * 1000 * k2})`);
  console.log(`readers: ${READERS} clients, retrieve(k1: 10, k2: 5, mode: LEXICAL), ${SECONDS} s per phase\n`);

  const rows: string[] = [];
  for (const share of [POOL, defaultConnectionShare(POOL)]) {
    const server = await startServerProcess(url, share);
    await phase(server.url, questions.slice(0, 20), undefined); // warm-up (short: the first 20 questions)
    const alone = await phase(server.url, questions, undefined);
    const beside = await phase(server.url, questions, heavyQuery);
    const refused = await phase(server.url, questions, STARVING);
    await server.stop();
    const label = share === POOL ? `whole pool (${share})` : `default share (${share} of ${POOL})`;
    const heavyNote = (p: Phase) => `${p.heavy}${Object.keys(p.heavyFailed).length ? ` (${JSON.stringify(p.heavyFailed)})` : ''}`;
    rows.push(
      `| ${label} | ${alone.p50.toFixed(1)} / ${alone.p99.toFixed(1)} | ${refused.p50.toFixed(1)} / ${refused.p99.toFixed(1)} | ${(refused.p99 / alone.p99).toFixed(2)}× | ${heavyNote(refused)} | ${beside.p50.toFixed(1)} / ${beside.p99.toFixed(1)} | ${(beside.p99 / alone.p99).toFixed(2)}× | ${heavyNote(beside)} | ${alone.failed + beside.failed + refused.failed}${failedNote(alone, beside, refused)} |`,
    );
    console.log(rows[rows.length - 1]);
  }
  console.log(
    "\n| connections per operation | readers alone p50 / p99 ms | beside the issue's request p50 / p99 ms | p99 ratio | its answers | beside the heaviest allowed p50 / p99 ms | p99 ratio | heavy operations done | readers failed |",
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(
    `\nload average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  await db.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
