/**
 * npm run bench:responsive — serving while the corpus embeds.
 *
 * A fresh store gets the first BENCH_DOCS (12; about 2,000 passages, 60 s or more of embedding on a
 * loaded 2-core machine) Factbook countries of the demo corpus, written as
 * `dhr serve --demo` writes them (loadDemoCorpus: split for USE-lite, indexed, recorded as pending,
 * not embedded); then the real `dhr serve` (a child process, this tree's build or sources, default
 * encoder USE-lite, ENCODER_THREADS unset) starts on it and embeds them at start, as on first start.
 * One client asks default-mode `retrieve` questions through the API, one every BENCH_INTERVAL_MS
 * (250), while it embeds, and then the same questions for BENCH_IDLE_ROUNDS (3) rounds once the
 * last line ("embedded …") has been printed. QUESTION_CACHE=0: every question is encoded. /readyz
 * is asked every 2 s during the embedding. Prints p50/p95 of both phases and their ratio (goal:
 * p50 during ≤ 2 × idle), the embedding's duration and rate, and /readyz's answers.
 *
 * Store: PGlite in a temporary folder; with DATABASE_URL, a fresh database `dhr_bench_responsive`
 * on that server. BENCH_BASELINE_ROOT: also run the tree there (e.g. an export of main) first, on a
 * fresh store of its own, for a before/after in the same run.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { loadDemoCorpus } from '../src/cli/demo';
import { UseLiteEncoder } from '../src/encoders/use-lite/encoder';
import { readFactbook } from '../src/ingest/factbook';
import { packageRoot } from '../src/paths';
import { openMigratedDatabase } from '../src/store/open';
import { inheritedEnv, startServe } from '../test/helpers/serve';
import { databaseUrl, openBenchDatabase } from './database';

const DOCS = Number(process.env.BENCH_DOCS ?? 12);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 250);
const IDLE_ROUNDS = Number(process.env.BENCH_IDLE_ROUNDS ?? 3);
const BASELINE_ROOT = process.env.BENCH_BASELINE_ROOT;
const PG = process.env.DATABASE_URL;
const NAME = 'dhr_bench_responsive';

const QUERY = `query($q: String!) { retrieve(question: $q) { passages { rank score passage { id text titlePath } } } }`;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function questions(): string[] {
  const titles = readFactbook({ limit: DOCS }).map((d) => d.title ?? '');
  const templates = ['What is the capital of %?', 'What languages are spoken in %?', 'What is the climate of %?', 'How many people live in %?'];
  return titles.flatMap((t, i) => [templates[i % templates.length].replace('%', t), templates[(i + 2) % templates.length].replace('%', t)]);
}

async function ask(url: string, question: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: QUERY, variables: { q: question } }),
  });
  const body = (await response.json()) as { errors?: unknown[]; data?: { retrieve: { passages: unknown[] } } };
  if (body.errors?.length || !body.data) throw new Error(`retrieve failed: ${JSON.stringify(body.errors)}`);
  return performance.now() - started;
}

/** A fresh store with the slice written and pending; returns the serve environment that reaches it and a cleanup. */
async function freshStore(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void>; passages: number }> {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (PG) {
    const db = await openBenchDatabase(PG, NAME, true);
    await db.close();
    const url = databaseUrl(PG, NAME);
    env = { DATABASE_URL: url };
    cleanup = async () => undefined;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-bench-responsive-'));
    env = { DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const config = loadConfig({ ...inheritedEnv(), ...env });
  const db = await openMigratedDatabase(config);
  const encoder = await UseLiteEncoder.load({ threads: 1 });
  let passages = 0;
  try {
    const started = Date.now();
    const loaded = await loadDemoCorpus(db, config.ingest, DOCS, encoder);
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages');
    passages = n;
    console.log(`corpus: ${loaded} Factbook documents, ${n} passages, written (not embedded) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await encoder.close();
    await db.close();
  }
  return { env, cleanup, passages };
}

interface Run {
  during: number[];
  idle: number[];
  embedSeconds: number;
  passages: number;
}

async function run(label: string, root: string, qs: string[]): Promise<Run> {
  const { env, cleanup, passages } = await freshStore();
  const { ENCODER_THREADS: _threads, ...inherited } = inheritedEnv();
  const server = await startServe(
    // ENCODER_THREADS left out: the server's own default (startServe's '1' is overridden by 0).
    { ...inherited, ...env, ENCODER_THREADS: '0', QUESTION_CACHE: '0', RATE_LIMIT_QUERIES: '0', LOG_LEVEL: 'warn' },
    300_000,
    { root },
  );
  const started = performance.now();
  const finished = () => {
    if (/embedding stopped/.test(server.stderr())) throw new Error(`the server's embedding stopped: ${server.stderr()}`);
    return /embedded \d+/.test(server.stderr());
  };
  const during = { latencies: [] as number[] };
  const ready: Record<number, number> = {};
  let readyCoverage = '';
  try {
    const probe = (async () => {
      while (!finished()) {
        const r = await fetch(new URL('/readyz', server.url));
        ready[r.status] = (ready[r.status] ?? 0) + 1;
        const body = (await r.json()) as { coverage?: { passages?: { embedded: number; total: number } } };
        if (body.coverage?.passages) readyCoverage = `${body.coverage.passages.embedded}/${body.coverage.passages.total}`;
        await sleep(2000);
      }
    })();
    let i = 0;
    while (!finished()) {
      const ms = await ask(server.url, qs[i++ % qs.length]);
      // Only answers that ended before the last line: asked while embedding.
      if (!finished()) during.latencies.push(ms);
      await sleep(INTERVAL_MS);
    }
    await probe;
    const embedSeconds = (performance.now() - started) / 1000;
    const last =
      server
        .stderr()
        .split('\n')
        .find((l) => /^embedded \d+/.test(l)) ?? '';
    console.log(`[${label}] ${last}`);
    await sleep(2000);
    const idle: number[] = [];
    for (let round = 0; round < IDLE_ROUNDS; round++) {
      for (const q of qs) {
        idle.push(await ask(server.url, q));
        await sleep(INTERVAL_MS);
      }
    }
    console.log(
      `[${label}] /readyz during embedding: ${Object.entries(ready)
        .map(([s, n]) => `${n}× ${s}`)
        .join(', ')}` + (readyCoverage ? ` (last coverage seen: ${readyCoverage} passages)` : ''),
    );
    return { during: during.latencies, idle, embedSeconds, passages };
  } catch (error) {
    console.error(`[${label}] the server's stderr:\n${server.stderr().slice(-4000)}`);
    throw error;
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
    await cleanup();
  }
}

function report(label: string, r: Run): void {
  const d50 = percentile(r.during, 0.5);
  const d95 = percentile(r.during, 0.95);
  const i50 = percentile(r.idle, 0.5);
  const i95 = percentile(r.idle, 0.95);
  console.log(
    `[${label}] embedding ${r.embedSeconds.toFixed(0)} s (${(r.passages / r.embedSeconds).toFixed(1)} passages/s); retrieve during embedding: n=${r.during.length} p50 ${d50.toFixed(1)} ms p95 ${d95.toFixed(1)} ms; ` +
      `idle: n=${r.idle.length} p50 ${i50.toFixed(1)} ms p95 ${i95.toFixed(1)} ms; ratio p50 ${(d50 / i50).toFixed(2)}× (goal ≤ 2), p95 ${(d95 / i95).toFixed(2)}×`,
  );
}

async function main(): Promise<void> {
  console.log(`store: ${PG ? `PostgreSQL (${NAME})` : 'PGlite'}; ${DOCS} documents; a question every ${INTERVAL_MS} ms; load average ${load()}`);
  const qs = questions();
  const runs: [string, string][] = [];
  if (BASELINE_ROOT) runs.push(['baseline', BASELINE_ROOT]);
  runs.push(['this tree', packageRoot()]);
  for (const [label, root] of runs) {
    const r = await run(label, root, qs);
    report(label, r);
    console.log(`load average ${load()}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
