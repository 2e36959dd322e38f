/**
 * npm run bench:citus — DHR (HIERARCHICAL) on a Citus cluster by shard count, against one server,
 * on the same synthetic corpus as bench:retrieve (bench/retrieve-corpus.ts), in the same run.
 *
 * Targets, each a database of its own kept for the next run (BENCH_FRESH=1 reloads):
 *   - one server (SINGLE_URL, default DATABASE_URL or postgresql://postgres@127.0.0.1:5432/postgres):
 *     the tier (the baseline of every ratio) and BENCH_SINGLE_TIERS (default "250k,2.5m" at 1m: one
 *     shard's part of 1M and of 10M on 4 shards, the figures the 10M projection is made of);
 *   - the Citus coordinator (CITUS_URL, its `postgres` database; required), once per count in
 *     BENCH_SHARDS (default "1,2,4"): the Citus step of `dhr migrate` with citus.shard_count = N, so
 *     each table has N shards, placed round-robin over the cluster's workers. Its databases are
 *     made on every node by scripts/citus-cluster.sh createdb (CITUS_DIR and CITUS_PORT as for it;
 *     the port defaults to CITUS_URL's).
 * Only the document HNSW index is built (HIERARCHICAL's stage 1; stage 2 reads passages by document).
 *
 * Timed a target at a time, after reading its embedding tables and indexes into the OS page cache
 * (pg_prewarm 'read', on every worker for Citus): the product's search() of HIERARCHICAL (k1 = 100,
 * k2 = 20, λ = 1, ef_search by the product's default), then HIERARCHICAL exact (the reference of
 * recall@20; on Citus also compared with one server's exact ranking).
 *   BENCH_EF_FACTORS ("": also HIERARCHICAL at stage-1 ef_search = factor × k1, e.g. "4,6,10", after the default)
 *   BENCH_TIER (1m)  BENCH_QUESTIONS (100)  BENCH_WARMUP (5)  BENCH_SEED  BENCH_BATCH (4000)  BENCH_BUILD_MEMORY (1GB)
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { search } from '../src/retrieval/search';
import type { VectorSearch } from '../src/retrieval/sql';
import type { SearchResult } from '../src/retrieval/types';
import { migrate } from '../src/store/migrate';
import { loadMigrations } from '../src/store/migration-files';
import { PostgresDatabase } from '../src/store/postgres';
import { databaseUrl, openBenchDatabase } from './database';
import { tierSpec, type CorpusSpec } from './retrieve-corpus';
import { benchQuestions, fmt, load, overlap, percentile, previousLoad, seconds, type LoadOptions } from './retrieve-load';

const citusUrl = process.env.CITUS_URL;
const singleUrl = process.env.SINGLE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const tier = (process.env.BENCH_TIER ?? '1m').toLowerCase();
const shardCounts = (process.env.BENCH_SHARDS ?? '1,2,4').split(',').filter(Boolean).map(Number);
const singleTiers = (process.env.BENCH_SINGLE_TIERS ?? (tier === '1m' ? '250k,2.5m' : ''))
  .split(',')
  .filter(Boolean)
  .map((t) => t.toLowerCase());
const questionCount = Number(process.env.BENCH_QUESTIONS ?? 100);
/** BENCH_EF_FACTORS (e.g. "4,6,10"): HIERARCHICAL also with stage-1 ef_search = factor × k1 (at most 1000), per target. */
const efFactors = (process.env.BENCH_EF_FACTORS ?? '').split(',').filter(Boolean).map(Number);
const seed = Number(process.env.BENCH_SEED ?? 20240611);
const warmup = Number(process.env.BENCH_WARMUP ?? 5);
const fresh = process.env.BENCH_FRESH === '1';
const loadOptions: LoadOptions = {
  batchRows: Number(process.env.BENCH_BATCH ?? 4000),
  buildWorkers: 1,
  buildMemory: /^\d+[MG]B$/.test(process.env.BENCH_BUILD_MEMORY ?? '') ? process.env.BENCH_BUILD_MEMORY! : '1GB',
  passageIndex: false,
};
const K1 = 100;
const K2 = 20;
const LAMBDA = 1;

interface Target {
  label: string;
  tier: string;
  spec: CorpusSpec;
  /** 0 for one server. */
  shards: number;
  db: PostgresDatabase;
  modelId: number;
  questions: Float32Array[];
  times: number[];
  results: SearchResult[];
  exact: SearchResult[];
  exactTimes: number[];
  /** Per BENCH_EF_FACTORS entry: times and results. */
  byFactor: { times: number[]; results: SearchResult[] }[];
}

const dbName = (t: string, shards: number) => `dhr_bench_citus_${t.replace('.', '_')}_${shards ? `s${shards}` : 'single'}`;

function clusterScript(command: 'createdb' | 'dropdb', name: string): void {
  const env = { ...process.env, CITUS_PORT: process.env.CITUS_PORT ?? new URL(citusUrl!).port };
  execFileSync('bash', ['scripts/citus-cluster.sh', command, name], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function openCitus(name: string, shards: number): Promise<PostgresDatabase> {
  const admin = new PostgresDatabase({ url: citusUrl!, maxConnections: 1 });
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (fresh && exists.length > 0) clusterScript('dropdb', name);
    if (fresh || exists.length === 0) clusterScript('createdb', name);
  } finally {
    await admin.close();
  }
  // citus.shard_count on the connection: the Citus step's create_distributed_table takes it.
  const url = new URL(databaseUrl(citusUrl!, name));
  url.searchParams.set('options', `-c citus.shard_count=${shards}`);
  const db = new PostgresDatabase({ url: url.toString(), maxConnections: 1 });
  db.distributed = 'citus';
  return db;
}

async function prepare(label: string, t: string, shards: number): Promise<Target> {
  const spec = tierSpec(t, seed, questionCount);
  const name = dbName(t, shards);
  const db = shards ? await openCitus(name, shards) : await openBenchDatabase(singleUrl, name, fresh);
  console.log(`\n${label}: database ${name}`);
  await migrate(db, loadMigrations(), shards ? { distributed: 'citus' } : {});
  let loaded = await previousLoad(db, spec);
  if (loaded) {
    const r = loaded.record;
    console.log(
      `  reusing the corpus loaded ${r.loadedAt}: load ${r.loadSeconds.toFixed(1)} s, HNSW documents ${r.documentIndexSeconds.toFixed(1)} s, ANALYZE ${r.analyzeSeconds.toFixed(1)} s`,
    );
  } else {
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
    if (n > 0) throw new Error(`${name} holds another or an unfinished load: run with BENCH_FRESH=1`);
    loaded = await load(db, spec, { ...loadOptions, citus: shards > 0 });
  }
  if (shards) {
    const [{ count }] = await db.query<{ count: number }>(
      `SELECT count(DISTINCT s.shardid)::int AS count FROM pg_dist_shard s WHERE s.logicalrelid = 'passage_embeddings'::regclass`,
    );
    const nodes = await db.query<{ node: string; n: number }>(
      `SELECT p.nodename || ':' || p.nodeport AS node, count(*)::int AS n FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid)
       JOIN pg_dist_node p ON p.groupid = pl.groupid WHERE s.logicalrelid = 'passage_embeddings'::regclass GROUP BY 1 ORDER BY 1`,
    );
    console.log(`  passage_embeddings: ${count} shards on ${nodes.map((x) => `${x.node} (${x.n})`).join(', ')}`);
    if (count !== shards) throw new Error(`${name} has ${count} shards, not ${shards}: run with BENCH_FRESH=1`);
  }
  const modelId = Number(loaded.model.id);
  const { questions } = await benchQuestions(db, spec, modelId);
  return {
    label,
    tier: t,
    spec,
    shards,
    db,
    modelId,
    questions,
    times: [],
    results: [],
    exact: [],
    exactTimes: [],
    byFactor: efFactors.map(() => ({ times: [], results: [] })),
  };
}

/** The embedding tables, their TOAST (the vectors live there) and indexes, one server or every worker. */
const PREWARM = `WITH rel AS (SELECT c.oid, c.reltoastrelid FROM pg_class c
    WHERE c.relkind IN ('r', 'i') AND (c.relname LIKE 'passage\\_embeddings%' OR c.relname LIKE 'document\\_embeddings%'))
  SELECT coalesce(sum(pg_prewarm(x, 'read')), 0)::bigint * current_setting('block_size')::int / 1048576 AS mb FROM (
    SELECT oid AS x FROM rel UNION SELECT reltoastrelid FROM rel WHERE reltoastrelid <> 0
    UNION SELECT i.indexrelid FROM pg_index i JOIN rel ON i.indrelid = rel.reltoastrelid) s`;

async function prewarm(t: Target): Promise<string> {
  // On Citus the coordinator's CREATE EXTENSION reaches the workers (which refuse one of their own).
  await t.db.exec('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
  if (!t.shards) {
    const [{ mb }] = await t.db.query<{ mb: number }>(PREWARM);
    return `${mb.toLocaleString()} MB`;
  }
  const rows = await t.db.query<{ node: string; result: string; success: boolean }>(
    `SELECT nodename || ':' || nodeport AS node, result, success FROM run_command_on_workers($1)`,
    [PREWARM],
  );
  const failed = rows.find((r) => !r.success);
  if (failed) throw new Error(`prewarm on ${failed.node}: ${failed.result}`);
  return rows.map((r) => `${r.node} ${Number(r.result).toLocaleString()} MB`).join(', ');
}

function request(t: Target, q: number, exact = false, efFactor?: number): VectorSearch {
  const model = { id: t.modelId, dimension: t.spec.dimension };
  return {
    ...(efFactor ? { efFactor, efSearch: 1 } : {}),
    mode: 'HIERARCHICAL',
    documentModel: model,
    passageModel: model,
    questionForDocuments: t.questions[q],
    questionForPassages: t.questions[q],
    k1: K1,
    k2: K2,
    lambda: LAMBDA,
    exact,
  };
}

const same = (a: SearchResult, b: SearchResult) =>
  a.passages.length === b.passages.length &&
  a.passages.every((p, i) => p.passageId === b.passages[i].passageId && Math.abs(p.score - b.passages[i].score) < 1e-5);

async function main() {
  if (!citusUrl)
    throw new Error('CITUS_URL: the coordinator of a running cluster (scripts/citus-cluster.sh start 4), e.g. postgresql://postgres@127.0.0.1:9700/postgres');
  const targets: Target[] = [];
  try {
    targets.push(await prepare(`one server, ${tier}`, tier, 0));
    for (const t of singleTiers) targets.push(await prepare(`one server, ${t}`, t, 0));
    for (const n of shardCounts) targets.push(await prepare(`Citus, ${tier} on ${n} shard${n > 1 ? 's' : ''}`, tier, n));

    // A target at a time, its relations read into the OS page cache first: interleaved over six
    // databases (14 GB) the first run measured the disk, not the statement (one server at 1M:
    // 58 ms p50 against 5.4 ms alone in bench:retrieve).
    console.log(`\ntiming: a target at a time (prewarm, ${warmup} warm-up questions, ${questionCount} questions, then ${questionCount} exact)`);
    for (const t of targets) {
      const started = process.hrtime.bigint();
      const read = await prewarm(t);
      for (let q = 0; q < Math.min(warmup, questionCount); q++) await search(t.db, request(t, questionCount - 1 - q));
      for (let q = 0; q < questionCount; q++) {
        const t0 = process.hrtime.bigint();
        t.results[q] = await search(t.db, request(t, q));
        t.times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      for (const [i, f] of efFactors.entries()) {
        for (let q = 0; q < questionCount; q++) {
          const t0 = process.hrtime.bigint();
          t.byFactor[i].results[q] = await search(t.db, request(t, q, false, f));
          t.byFactor[i].times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }
      for (let q = 0; q < questionCount; q++) {
        const t0 = process.hrtime.bigint();
        t.exact[q] = await search(t.db, request(t, q, true));
        t.exactTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      console.log(`  ${t.label}: prewarmed ${read}, ${seconds(started).toFixed(0)} s`);
    }

    const base = targets[0];
    const p50 = (t: Target) =>
      percentile(
        [...t.times].sort((a, b) => a - b),
        50,
      );
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const single = (t: string) => targets.find((x) => x.shards === 0 && x.tier === t);
    console.log(`\nHIERARCHICAL (k1=${K1}, k2=${K2}, λ=${LAMBDA}), ${questionCount} questions a target; recall@${K2} against the exact DHR ranking`);
    console.log(
      `\n| target | passages | p50 ms | p95 ms | × one server ${tier} (p50) | recall@${K2} vs own exact | recall@${K2} vs one server's exact | exact p50 ms | exact = one server's exact |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const t of targets) {
      const sorted = [...t.times].sort((a, b) => a - b);
      const reference = single(t.tier)!;
      const recallOwn = mean(t.results.map((r, q) => overlap(r, t.exact[q], K2)));
      const recallSingle = mean(t.results.map((r, q) => overlap(r, reference.exact[q], K2)));
      const identical = t.exact.filter((r, q) => same(r, reference.exact[q])).length;
      console.log(
        `| ${t.label} | ${(t.spec.documents * t.spec.passagesPerDocument).toLocaleString()} | ${fmt(percentile(sorted, 50), 2)} | ${fmt(percentile(sorted, 95), 2)} | ` +
          `${fmt(p50(t) / p50(base), 2)}× | ${fmt(recallOwn, 3)} | ${fmt(recallSingle, 3)} | ${fmt(
            percentile(
              [...t.exactTimes].sort((a, b) => a - b),
              50,
            ),
            2,
          )} | ${identical}/${questionCount} |`,
      );
    }

    if (efFactors.length > 0) {
      console.log(`\nHIERARCHICAL by stage-1 ef_search factor (ef_search = factor × k1, at most 1000): p50 ms (recall@${K2} vs own exact)`);
      console.log(`\n| target | default | ${efFactors.map((f) => `${f}·k1`).join(' | ')} |`);
      console.log(`|---|---:|${efFactors.map(() => '---:').join('|')}|`);
      for (const t of targets) {
        const cell = (times: number[], results: SearchResult[]) =>
          `${fmt(
            percentile(
              [...times].sort((a, b) => a - b),
              50,
            ),
            2,
          )} (${fmt(mean(results.map((r, q) => overlap(r, t.exact[q], K2))), 3)})`;
        console.log(`| ${t.label} | ${cell(t.times, t.results)} | ${t.byFactor.map((b) => cell(b.times, b.results)).join(' | ')} |`);
      }
    }

    // The 10M projection: on 4 workers with their own cores, one shard holds 2.5M passages and runs
    // the statement a 2.5M server runs; what Citus adds is the coordinator's planning, fan-out and
    // merge, measured here at 1M on 4 shards against one server holding one shard's part (250k).
    const four = targets.find((t) => t.shards === 4 && t.tier === '1m');
    const quarter = single('250k');
    const shard10m = single('2.5m');
    if (tier === '1m' && four && quarter && shard10m) {
      const overhead = p50(four) - p50(quarter);
      const projected = p50(shard10m) + overhead;
      const recall = Math.min(
        mean(four.results.map((r, q) => overlap(r, four.exact[q], K2))),
        mean(shard10m.results.map((r, q) => overlap(r, shard10m.exact[q], K2))),
      );
      console.log(
        `\nprojection, 10M on 4 shards (a worker per shard with its own cores): one server at 2.5M ${fmt(p50(shard10m), 2)} ms + Citus's part ` +
          `(4 shards at 1M ${fmt(p50(four), 2)} ms − one server at 250k ${fmt(p50(quarter), 2)} ms = ${fmt(overhead, 2)} ms) = ${fmt(projected, 2)} ms p50, ` +
          `${fmt(projected / p50(base), 2)}× one server at 1M (goal ≤ 2×: ${projected <= 2 * p50(base) ? 'met' : 'NOT met'}); ` +
          `recall@${K2} ≥ the lower of 4 shards at 1M and one server at 2.5M: ${fmt(recall, 3)} (goal ≥ 0.98: ${recall >= 0.98 ? 'met' : 'NOT met'})`,
      );
    }
  } finally {
    for (const t of targets) await t.db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
