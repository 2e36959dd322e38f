/**
 * npm run bench:retrieve — DHR retrieval latency and recall at scale on a PostgreSQL server.
 *
 * Corpus: bench/retrieve-corpus.ts (clustered 512-d unit vectors, 10 passages a document, seeded).
 * Tiers: BENCH_TIER=100k (10,000 documents, 100,000 passages) or 1m (100,000 / 1,000,000).
 * The corpus is loaded into a database `dhr_bench_retrieve_<tier>` on DATABASE_URL's server
 * (default postgresql://postgres@127.0.0.1:5432/postgres) and kept for the next run; BENCH_FRESH=1
 * drops and reloads it. Rows of documents and passages are minimal (set-based INSERT … SELECT);
 * vectors go in as binary `vector[]` batches; the per-model HNSW indexes are built after the load.
 *
 * Measured, on the same questions (ANN modes in a shuffled order per question, exact modes after):
 * search() latency (the product's call: settings when they change, one statement) of HIERARCHICAL, PARALLEL and FLAT
 * over HNSW, FLAT exact (sequential scan: the DPR setting and the baseline of the ratios), and
 * HIERARCHICAL exact (the exact DHR ranking that recall@k2 is computed against). Also
 * HIERARCHICAL with other stage-1 ef_search factors (BENCH_EF_FACTORS, default "1,2,3,4": ef_search =
 * factor × k1; the product's default, DEFAULT_EF_FACTOR, is also the first row).
 *   BENCH_ORDER (interleaved | blocks), BENCH_STAGE1_EXPERIMENT=1 (halfvec stage-1 index; question vectors as text literals; prepared statement), BENCH_QUESTIONS (200)  BENCH_SEED (20240611)  BENCH_WARMUP (5)  BENCH_BATCH (4000 rows/INSERT)
 *   BENCH_BUILD_WORKERS (1: max_parallel_maintenance_workers for the HNSW builds; the graphs differ only by insertion order)  BENCH_BUILD_MEMORY (4GB)
 *   BENCH_PREWARM=1 (pg_prewarm the relations HIERARCHICAL reads before timing)  BENCH_JSON=path (the summary as JSON)
 */
import 'reflect-metadata';
import { Client } from 'pg';
import { prng } from '../test/helpers/prng';
import { search } from '../src/retrieval/search';
import { searchStatement } from '../src/retrieval/sql';
import type { RetrievalMode } from '../src/retrieval/modes';
import type { VectorSearch } from '../src/retrieval/sql';
import { DEFAULT_EF_FACTOR, DEFAULT_EF_SEARCH, type SearchResult } from '../src/retrieval/types';
import { settingsStatement, type Database } from '../src/store/db';
import { registerModel } from '../src/store/embeddings';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { databaseUrl as benchDatabaseUrl, openBenchDatabase } from './database';
import { tierSpec } from './retrieve-corpus';
import {
  benchQuestions,
  buildHnsw,
  fmt,
  HNSW_BUILD,
  load,
  overlap,
  percentile,
  previousLoad,
  seconds,
  syntheticEncoder,
  type LoadOptions,
} from './retrieve-load';

const tier = (process.env.BENCH_TIER ?? '100k').toLowerCase();
const fresh = process.env.BENCH_FRESH === '1';
const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const spec = tierSpec(tier, Number(process.env.BENCH_SEED ?? 20240611), Number(process.env.BENCH_QUESTIONS ?? 200));
const warmup = Number(process.env.BENCH_WARMUP ?? 5);
const batchRows = Number(process.env.BENCH_BATCH ?? 4000);
const efFactors = (process.env.BENCH_EF_FACTORS ?? '1,2,3,4').split(',').filter(Boolean).map(Number);
const K1 = 100;
const K2 = 20;
const LAMBDA = 1;
const loadOptions: LoadOptions = {
  batchRows,
  buildWorkers: Number(process.env.BENCH_BUILD_WORKERS ?? 1),
  buildMemory: /^\d+[MG]B$/.test(process.env.BENCH_BUILD_MEMORY ?? '') ? process.env.BENCH_BUILD_MEMORY! : '4GB',
  passageIndex: true,
};
const prewarm = process.env.BENCH_PREWARM === '1';
const jsonPath = process.env.BENCH_JSON;
/** BENCH_STORAGE_EXPERIMENT=1: also time the modes on copies of the embedding tables with `embedding` STORAGE PLAIN (not TOASTed). */
const storageExperiment = process.env.BENCH_STORAGE_EXPERIMENT === '1';
const PLAIN_SCHEMA = 'bench_plain';

async function openDatabase(drop: boolean): Promise<{ db: PostgresDatabase; name: string }> {
  const name = `dhr_bench_retrieve_${tier.replace('.', '_')}`;
  return { db: await openBenchDatabase(baseUrl, name, drop), name };
}

const databaseUrl = (name: string, searchPath?: string) => benchDatabaseUrl(baseUrl, name, searchPath);

interface Variant {
  label: string;
  mode: RetrievalMode;
  exact?: boolean;
  efFactor?: number;
  /** Another way to run the same request (experiments); default: the product's search(). */
  run?: (db: Database, s: VectorSearch) => Promise<SearchResult>;
}

/**
 * BENCH_STAGE1_EXPERIMENT=1: where HIERARCHICAL's time could go down, measured beside the product's
 * path on the same questions. (a) Stage 1 through an HNSW index on `embedding::halfvec(dim)`
 * (half the bytes per graph node; scores stay exact `vector` products). (b) The question vector
 * sent as a text literal instead of pgvector's binary form (the product's path before). (c) The
 * statement as a named prepared statement (parse and plan once).
 */
const stage1Experiment = process.env.BENCH_STAGE1_EXPERIMENT === '1';
/** BENCH_ORDER=interleaved (default): modes rotated per question; blocks: each mode timed on all questions in turn. */
const order = process.env.BENCH_ORDER === 'blocks' ? 'blocks' : 'interleaved';

async function buildHalfvecDocumentIndex(db: Database, modelId: number): Promise<number> {
  const start = process.hrtime.bigint();
  await db.transaction(async (tx) => {
    await tx.query(`SET LOCAL maintenance_work_mem = '4GB'`);
    await tx.query(
      `CREATE INDEX IF NOT EXISTS document_embeddings_hnsw_half_m${modelId} ON document_embeddings
       USING hnsw ((embedding::halfvec(${spec.dimension})) halfvec_ip_ops) WITH (m = ${HNSW_BUILD.m}, ef_construction = ${HNSW_BUILD.efConstruction})
       WHERE model_id = ${modelId}`,
    );
  });
  await db.exec('ANALYZE document_embeddings');
  return seconds(start);
}

/** Stage 1 ordered by halfvec distance (the halfvec index), everything else as the product's statement. */
function halfvecStage1(sql: string): string {
  const replaced = sql.replace(
    /ORDER BY \(e\.embedding::vector\((\d+)\) <#> (\$\d+)::vector\(\d+\)\)/,
    (_, dim: string, q: string) => `ORDER BY (e.embedding::halfvec(${dim}) <#> ${q}::halfvec(${dim}))`,
  );
  if (replaced === sql) throw new Error('stage-1 ORDER BY not found');
  return replaced;
}

type Row = { passages: SearchResult['passages']; documents: SearchResult['documents'] };

/** The product's search() with the statement changed: stage 1 on the halfvec index, and/or vectors as text. */
/**
 * The product's statement as a named prepared statement on a connection of its own: parsed once,
 * and planned once PostgreSQL settles on a generic plan (plan_cache_mode auto, after five runs).
 */
function preparedRunner(url: string): { run: (db: Database, s: VectorSearch) => Promise<SearchResult>; close: () => Promise<void> } {
  const client = new Client({ connectionString: url });
  const connected = client.connect();
  let applied = '';
  const names = new Map<string, string>();
  return {
    run: async (db, s) => {
      await connected;
      const statement = searchStatement(s, db.vectorParam?.bind(db));
      const key = JSON.stringify(statement.settings);
      if (key !== applied) {
        const set = settingsStatement(statement.settings);
        await client.query(set.sql, set.params);
        applied = key;
      }
      let name = names.get(statement.sql);
      if (!name) names.set(statement.sql, (name = `dhr_search_${names.size}`));
      const { rows } = await client.query<Row>({ name, text: statement.sql, values: statement.params });
      return { passages: rows[0].passages, documents: rows[0].documents, questionTerms: null };
    },
    close: () => client.end(),
  };
}

function experimentRunner(halfvec: boolean, textVectors: boolean): (db: Database, s: VectorSearch) => Promise<SearchResult> {
  return async (db, s) => {
    const statement = searchStatement(s, textVectors ? undefined : db.vectorParam?.bind(db));
    const sql = halfvec ? halfvecStage1(statement.sql) : statement.sql;
    const [row] = await db.queryWithSettings<Row>(statement.settings, sql, statement.params);
    return { passages: row.passages, documents: row.documents, questionTerms: null };
  };
}

/**
 * BENCH_PREWARM=1: load what HIERARCHICAL reads (the document HNSW index, both embedding heaps, the
 * passage document_id index) into shared buffers with pg_prewarm, as a server sized for its corpus
 * would hold them; reports whether they fit in shared_buffers.
 */
async function prewarmHierarchical(db: Database, modelId: number): Promise<void> {
  const t = process.hrtime.bigint();
  await db.exec('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
  const relations = [`document_embeddings_hnsw_m${modelId}`, 'document_embeddings', 'passage_embeddings_document_idx', 'passage_embeddings'];
  const [{ buffers }] = await db.query<{ buffers: string }>(`SELECT current_setting('shared_buffers') AS buffers`);
  const loaded: string[] = [];
  for (const relation of relations) {
    const [{ blocks, size }] = await db.query<{ blocks: number; size: string }>(
      `SELECT pg_prewarm($1::regclass, 'buffer')::int AS blocks, pg_size_pretty(pg_relation_size($1::regclass)) AS size`,
      [relation],
    );
    loaded.push(`${relation} ${size} (${blocks.toLocaleString()} blocks)`);
  }
  console.log(`  prewarmed into shared_buffers ${buffers} in ${seconds(t).toFixed(1)} s: ${loaded.join(', ')}`);
}

async function explain(db: Database, s: VectorSearch, transform: (sql: string) => string = (sql) => sql): Promise<string[]> {
  const statement = searchStatement(s);
  statement.sql = transform(statement.sql);
  return db.transaction(async (tx) => {
    for (const [name, value] of Object.entries(statement.settings)) await tx.query(`SELECT set_config($1, $2, true)`, [name, value]);
    const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, statement.params);
    // The question's vector literal is 512 numbers: shown abbreviated.
    return rows.map((r) => r['QUERY PLAN'].replace(/'\[[-0-9.e,]+\]'::(half)?vec(tor)?/g, "'[…]'::$1vec$2"));
  });
}

/**
 * The same statements against copies of both embedding tables whose `embedding` column is STORAGE
 * PLAIN (pgvector's type default is EXTERNAL: a 512-d vector, 2,056 bytes, pushes the row over the
 * 2 kB TOAST threshold, so every vector lives out of line). A second connection with
 * search_path = bench_plain, public runs the product's unchanged SQL on the copies.
 */
async function compareStorage(
  db: Database,
  name: string,
  modelId: number,
  run: (target: Database, v: Variant, q: number) => Promise<SearchResult>,
  questions: number,
  variants: Variant[],
) {
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%hnsw%'`, [PLAIN_SCHEMA]);
  if (n < 2) {
    console.log(`\nbuilding ${PLAIN_SCHEMA}: copies of the embedding tables with embedding STORAGE PLAIN`);
    await db.exec(`DROP SCHEMA IF EXISTS ${PLAIN_SCHEMA} CASCADE; CREATE SCHEMA ${PLAIN_SCHEMA}`);
    for (const table of ['document_embeddings', 'passage_embeddings']) {
      const t = process.hrtime.bigint();
      // Not INCLUDING INDEXES: that would copy the HNSW index too and maintain it row by row.
      await db.exec(`CREATE TABLE ${PLAIN_SCHEMA}.${table} (LIKE public.${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await db.exec(`ALTER TABLE ${PLAIN_SCHEMA}.${table} ALTER COLUMN embedding SET STORAGE PLAIN`);
      await db.exec(`INSERT INTO ${PLAIN_SCHEMA}.${table} SELECT * FROM public.${table}`);
      if (table === 'document_embeddings') {
        await db.exec(`ALTER TABLE ${PLAIN_SCHEMA}.${table} ADD PRIMARY KEY (model_id, document_id)`);
      } else {
        await db.exec(`ALTER TABLE ${PLAIN_SCHEMA}.${table} ADD PRIMARY KEY (model_id, passage_id)`);
        await db.exec(`CREATE INDEX passage_embeddings_document_idx ON ${PLAIN_SCHEMA}.${table} (model_id, document_id)`);
      }
      const copy = seconds(t);
      const index = await buildHnsw(db, `${PLAIN_SCHEMA}.${table}`, modelId, spec, loadOptions);
      console.log(`  ${table}: copy ${copy.toFixed(1)} s, HNSW ${index.toFixed(1)} s`);
    }
    await db.exec(`ANALYZE ${PLAIN_SCHEMA}.document_embeddings; ANALYZE ${PLAIN_SCHEMA}.passage_embeddings`);
  }
  const sizes = await db.query<{ t: string; heap: string; toast: string }>(
    `SELECT n.nspname || '.' || c.relname AS t, pg_size_pretty(pg_relation_size(c.oid)) AS heap,
            pg_size_pretty(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) AS toast
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relname IN ('document_embeddings', 'passage_embeddings') AND n.nspname IN ('public', $1) ORDER BY 1`,
    [PLAIN_SCHEMA],
  );
  console.log(`  heap / TOAST: ${sizes.map((r) => `${r.t} ${r.heap} / ${r.toast}`).join(', ')}`);
  const plain = new PostgresDatabase({ url: databaseUrl(name, `${PLAIN_SCHEMA},public`), maxConnections: 1 });
  try {
    const [{ schemas }] = await plain.query<{ schemas: string[] }>('SELECT current_schemas(false)::text[] AS schemas');
    if (schemas[0] !== PLAIN_SCHEMA) throw new Error(`search_path not applied: ${schemas.join(',')}`);
    const targets: [string, Database][] = [
      ['EXTERNAL (TOAST, as migrated)', db],
      ['PLAIN (inline)', plain],
    ];
    for (let i = 0; i < Math.min(warmup, questions); i++) for (const [, target] of targets) for (const v of variants) await run(target, v, questions - 1 - i);
    const times = targets.map(() => variants.map(() => [] as number[]));
    for (let q = 0; q < questions; q++) {
      for (let j = 0; j < variants.length * 2; j++) {
        const k = (q + j) % (variants.length * 2);
        const [ti, vi] = [k % 2, Math.floor(k / 2)];
        const t0 = process.hrtime.bigint();
        await run(targets[ti][1], variants[vi], q);
        times[ti][vi].push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
    console.log(`\n| storage | mode | p50 ms | p95 ms | speed-up vs FLAT exact, same storage (p50) |`);
    console.log('|---|---|---:|---:|---:|');
    targets.forEach(([label], ti) => {
      const p = times[ti].map((ts) => [...ts].sort((a, b) => a - b));
      const base = percentile(p[variants.findIndex((v) => v.mode === 'FLAT' && v.exact)], 50);
      variants.forEach((v, vi) => {
        console.log(
          `| ${label} | ${v.label} | ${fmt(percentile(p[vi], 50), 2)} | ${fmt(percentile(p[vi], 95), 2)} | ${fmt(base / percentile(p[vi], 50), 2)}× |`,
        );
      });
    });
    return plain;
  } catch (error) {
    await plain.close();
    throw error;
  }
}

async function main() {
  let { db, name } = await openDatabase(fresh);
  try {
    console.log(`DHR retrieval at scale — tier ${tier}, database ${name}`);
    await migrate(db);
    let loaded = await previousLoad(db, spec);
    if (!loaded) {
      const [{ n }] = await db.query<{ n: number }>('SELECT (SELECT count(*) FROM documents) + (SELECT count(*) FROM embedding_models) AS n');
      if (n > 0) {
        console.log('the database holds another or an unfinished load: recreating it');
        await db.close();
        ({ db, name } = await openDatabase(true));
        await migrate(db);
      }
    }
    if (loaded) {
      const r = loaded.record;
      console.log(`reusing the corpus loaded ${r.loadedAt} (BENCH_FRESH=1 reloads); times of that load:`);
    } else {
      loaded = await load(db, spec, loadOptions);
    }
    const { model, record } = loaded;
    console.log(
      `  load ${record.loadSeconds.toFixed(1)} s, HNSW documents ${record.documentIndexSeconds.toFixed(1)} s, ` +
        `HNSW passages ${record.passageIndexSeconds.toFixed(1)} s, ANALYZE ${record.analyzeSeconds.toFixed(1)} s`,
    );
    // registerModel finds the model and its indexes (IF NOT EXISTS): a slow call would mean another index was built.
    const reg = process.hrtime.bigint();
    await registerModel(db, syntheticEncoder(spec), model.settings);
    const regSeconds = seconds(reg);
    const indexes = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE indexname LIKE '%hnsw_m${Number(model.id)}' ORDER BY 1`);
    console.log(`  registerModel: ${regSeconds.toFixed(2)} s, HNSW indexes: ${indexes.map((i) => i.indexname).join(', ')}`);
    const sizes = await db.query<{ name: string; size: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_total_relation_size(c.oid)) AS size FROM pg_class c
       WHERE c.relname IN ('passage_embeddings', 'document_embeddings', 'passage_embeddings_hnsw_m${Number(model.id)}', 'document_embeddings_hnsw_m${Number(model.id)}') ORDER BY 1`,
    );
    console.log(`  sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(', ')}`);

    if (stage1Experiment) {
      const built = await buildHalfvecDocumentIndex(db, Number(model.id));
      const [half] = await db.query<{ size: string }>(`SELECT pg_size_pretty(pg_relation_size('document_embeddings_hnsw_half_m${Number(model.id)}')) AS size`);
      const [full] = await db.query<{ size: string }>(`SELECT pg_size_pretty(pg_relation_size('document_embeddings_hnsw_m${Number(model.id)}')) AS size`);
      console.log(`  stage-1 experiment: halfvec document index ${half.size} (vector: ${full.size}), built in ${built.toFixed(1)} s`);
    }

    if (prewarm) await prewarmHierarchical(db, Number(model.id));

    // Questions near random passages (their stored vectors).
    const { targets, questions } = await benchQuestions(db, spec, Number(model.id));

    const modelRef = { id: Number(model.id), dimension: Number(model.dimension) };
    const request = (v: Variant, q: Float32Array): VectorSearch => ({
      mode: v.mode,
      documentModel: modelRef,
      passageModel: modelRef,
      questionForDocuments: q,
      questionForPassages: q,
      k1: K1,
      k2: K2,
      lambda: LAMBDA,
      exact: v.exact,
      efSearch: v.efFactor ? 1 : undefined,
      efFactor: v.efFactor,
    });
    const prepared = stage1Experiment ? preparedRunner(databaseUrl(name)) : undefined;
    const variants: Variant[] = [
      { label: 'HIERARCHICAL (HNSW + exact stage 2)', mode: 'HIERARCHICAL' },
      ...efFactors.map((f) => ({ label: `HIERARCHICAL, stage-1 ef_search ${f}·k1 = ${Math.ceil(f * K1)}`, mode: 'HIERARCHICAL' as const, efFactor: f })),
      ...(stage1Experiment
        ? [
            { label: 'HIERARCHICAL, stage 1 on a halfvec HNSW index', mode: 'HIERARCHICAL' as const, run: experimentRunner(true, false) },
            { label: 'HIERARCHICAL, question vector as a text literal', mode: 'HIERARCHICAL' as const, run: experimentRunner(false, true) },
            { label: 'HIERARCHICAL, named prepared statement', mode: 'HIERARCHICAL' as const, run: prepared!.run },
          ]
        : []),
      { label: 'PARALLEL (HNSW)', mode: 'PARALLEL' },
      { label: 'FLAT (HNSW)', mode: 'FLAT' },
      { label: 'FLAT exact (seq scan, DPR; baseline)', mode: 'FLAT', exact: true },
      { label: 'HIERARCHICAL exact (reference)', mode: 'HIERARCHICAL', exact: true },
    ];
    const flatExact = variants.findIndex((v) => v.mode === 'FLAT' && v.exact);
    const reference = variants.length - 1;

    const times = variants.map(() => [] as number[]);
    const results = variants.map(() => [] as SearchResult[]);
    const started = process.hrtime.bigint();
    const timeOne = async (k: number, q: number) => {
      const t0 = process.hrtime.bigint();
      results[k][q] = await (variants[k].run ?? search)(db, request(variants[k], questions[q]));
      times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    };
    const warm = async (k: number) => {
      for (let i = 0; i < Math.min(warmup, questions.length); i++)
        await (variants[k].run ?? search)(db, request(variants[k], questions[questions.length - 1 - i]));
    };
    if (order === 'interleaved') {
      console.log(`\nwarm-up: ${warmup} questions × ${variants.length} modes`);
      for (let k = 0; k < variants.length; k++) await warm(k);
      console.log(
        `timing: ${questions.length} questions, ANN modes in a shuffled order per question, then the exact modes (k1=${K1}, k2=${K2}, λ=${LAMBDA}, ef_search max(${DEFAULT_EF_SEARCH}, ${DEFAULT_EF_FACTOR} × rows a stage returns))`,
      );
      // A fixed rotation gives each mode the same predecessor every time, and whichever follows an
      // exact mode (a sequential scan through 0.3–5 GB) finds its caches cold: 1–2 ms at 1M. So the
      // ANN modes run in a new seeded order for each question, and the exact modes (the baseline and
      // the reference) in a block of their own afterwards.
      const ann = variants.map((_, k) => k).filter((k) => !variants[k].exact);
      const rand = prng(spec.seed + 1);
      for (let q = 0; q < questions.length; q++) {
        for (let i = ann.length - 1; i > 0; i--) {
          const j = Math.floor(rand() * (i + 1));
          [ann[i], ann[j]] = [ann[j], ann[i]];
        }
        for (const k of ann) await timeOne(k, q);
        if ((q + 1) % 50 === 0) console.log(`  … ${q + 1} questions (${seconds(started).toFixed(0)} s)`);
      }
      for (let k = 0; k < variants.length; k++) {
        if (!variants[k].exact) continue;
        for (let q = 0; q < questions.length; q++) await timeOne(k, q);
      }
    } else {
      // One mode at a time, as a service answering one kind of query runs; interleaved, a mode that
      // follows a 5 GB sequential scan (the exact modes) or another index finds its pages evicted.
      console.log(`\ntiming: ${questions.length} questions per mode, one mode at a time after ${warmup} warm-up questions (k1=${K1}, k2=${K2}, λ=${LAMBDA})`);
      for (let k = 0; k < variants.length; k++) {
        await warm(k);
        for (let q = 0; q < questions.length; q++) await timeOne(k, q);
        console.log(`  … ${variants[k].label} (${seconds(started).toFixed(0)} s)`);
      }
    }

    const baseP50 = percentile(
      [...times[flatExact]].sort((a, b) => a - b),
      50,
    );
    const answered = results[reference].filter((r, q) => r.passages.some((p) => p.passageId === targets[q])).length;
    console.log(`\nthe question's own passage is in the exact DHR top-${K2} for ${answered}/${questions.length} questions`);
    console.log(`\n| mode | p50 ms | p95 ms | recall@${K2} vs exact DHR | recall@${K2} vs own exact | speed-up vs FLAT exact (p50) |`);
    console.log('|---|---:|---:|---:|---:|---:|');
    const summary: { label: string; p50: number; p95: number; recall: number }[] = [];
    variants.forEach((v, k) => {
      const sorted = [...times[k]].sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      const p95 = percentile(sorted, 95);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const recall = mean(results[k].map((r, q) => overlap(r, results[reference][q], K2)));
      // FLAT over HNSW against FLAT exact; HIERARCHICAL against HIERARCHICAL exact (the same as the DHR column).
      const own =
        v.mode === 'FLAT' && !v.exact
          ? fmt(mean(results[k].map((r, q) => overlap(r, results[flatExact][q], K2))), 3)
          : v.mode === 'HIERARCHICAL'
            ? fmt(recall, 3)
            : v.exact
              ? '1.000'
              : '—';
      summary.push({ label: v.label, p50, p95, recall });
      console.log(`| ${v.label} | ${fmt(p50, 2)} | ${fmt(p95, 2)} | ${fmt(recall, 3)} | ${own} | ${fmt(baseP50 / p50, 2)}× |`);
    });

    if (jsonPath) {
      const { writeFileSync } = await import('node:fs');
      const [{ version }] = await db.query<{ version: string }>(
        `SELECT version() || ', pgvector ' || (SELECT extversion FROM pg_extension WHERE extname = 'vector') || ', shared_buffers ' || current_setting('shared_buffers') AS version`,
      );
      writeFileSync(
        jsonPath,
        JSON.stringify(
          {
            tier,
            order,
            prewarm,
            questions: questions.length,
            server: version,
            cpus: (await import('node:os')).cpus().length,
            load: record,
            summary,
            flatExactP50: baseP50,
          },
          null,
          2,
        ),
      );
    }

    const h = summary[0];
    console.log(
      `\ntargets (issue, at 1M): HIERARCHICAL p50 ≤ 5 ms: ${h.p50 <= 5 ? 'met' : 'NOT met'} (${fmt(h.p50, 2)} ms); ` +
        `≥ 4× faster than FLAT exact: ${baseP50 / h.p50 >= 4 ? 'met' : 'NOT met'} (${fmt(baseP50 / h.p50, 2)}×); ` +
        `recall@${K2} ≥ 0.98: ${h.recall >= 0.98 ? 'met' : 'NOT met'} (${fmt(h.recall, 3)})${tier === '1m' ? '' : `  [this is the ${tier} tier]`}`,
    );

    const plan = await explain(db, request(variants[0], questions[0]));
    console.log(
      `\nEXPLAIN (ANALYZE, BUFFERS) of HIERARCHICAL (question 0, settings ${JSON.stringify(searchStatement(request(variants[0], questions[0])).settings)}):`,
    );
    for (const line of plan) console.log(`    ${line}`);
    const text = plan.join('\n');
    console.log(
      `stage 1 uses document_embeddings_hnsw_m${modelRef.id}: ${text.includes(`document_embeddings_hnsw_m${modelRef.id}`) ? 'yes' : 'NO'}; ` +
        `stage 2 uses passage_embeddings_document_idx: ${text.includes('passage_embeddings_document_idx') ? 'yes' : 'NO'}; JIT: ${text.includes('JIT:') ? 'YES' : 'no'}`,
    );

    if (stage1Experiment) {
      const halfPlan = await explain(db, request(variants[0], questions[0]), halfvecStage1);
      console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of HIERARCHICAL with stage 1 on the halfvec index (question 0):`);
      for (const line of halfPlan) console.log(`    ${line}`);
    }

    await prepared?.close();

    if (storageExperiment) {
      const experimentVariants = variants.filter((v) => !v.efFactor && !v.run);
      const plain = await compareStorage(
        db,
        name,
        modelRef.id,
        (target, v, q) => search(target, request(v, questions[q])),
        questions.length,
        experimentVariants,
      );
      try {
        const plan = await explain(plain, request(variants[0], questions[0]));
        console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of HIERARCHICAL on ${PLAIN_SCHEMA} (question 0):`);
        for (const line of plan) console.log(`    ${line}`);
      } finally {
        await plain.close();
      }
    }

    if (tier === '100k') {
      // 1M has 10× the rows; HNSW insertion costs ~log n each, so ×10·log(1e6)/log(1e5) = ×12; the 1M
      // tier's document index has as many vectors as this tier's passage index.
      const loadEst = record.loadSeconds * 10;
      const indexEst = record.passageIndexSeconds + record.passageIndexSeconds * 12;
      const queryEst = (times.reduce((s, ts) => s + ts.reduce((a, b) => a + b, 0), 0) / 1000) * 10;
      const total = loadEst + indexEst + record.analyzeSeconds * 10 + queryEst;
      console.log(
        `\nestimate for BENCH_TIER=1m from this run: load ≈ ${(loadEst / 60).toFixed(1)} min, HNSW builds ≈ ${(indexEst / 60).toFixed(1)} min, ` +
          `timed queries ≤ ${(queryEst / 60).toFixed(1)} min (if every mode scaled linearly), total ≈ ${(total / 60).toFixed(1)} min` +
          `${total > 35 * 60 ? ' — over 35 minutes: do not start it on this machine' : ''}`,
      );
    }
  } finally {
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
