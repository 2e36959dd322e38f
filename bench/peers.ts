/**
 * npm run bench:peers — the embedded default beside the embedded peers, in one run, on one real
 * corpus: the eval's Python-docs corpus (`dhr eval --dataset pydocs`, ≈ 31,000 passages of the
 * Python 3.11 reference, fetched by package name) with its stored USE-lite passage vectors, and the
 * same question vectors everywhere (the product's question encoder).
 *
 * The store: a copy of the eval's cached load (`.cache/eval-corpus/pydocs-…`, left as it is; a
 * folder another process holds is refused), else the eval's own loader builds one in the
 * temporary folder (≈ 25 min on 2 cores; `dhr eval --dataset pydocs --reuse-corpus` keeps one).
 * Beside it, on the same passages:
 *  - pg_textsearch's own top-k (bm25 index, english, k1 1.2, b 0.75) on a scratch table of
 *    (passage id, passage_search_text(title_path, text)): in the product's PGlite when that loads
 *    the extension, else in a second PGlite on disk (the output says which); what the product's
 *    LEXICAL does internally does not change this baseline;
 *  - LanceDB (embedded, @lancedb/lancedb) with the same ids, text and vectors: FTS (english,
 *    stemmed, its own stop words out); vector search on an IVF-HNSW-SQ index (one partition), with
 *    ef as the product's FLAT sets hnsw.ef_search (100 at k 20) and with LanceDB's default ef, and
 *    by brute force; the RRF hybrid of the indexed two (ef as FLAT's). Distance cosine, which
 *    ranks these unit vectors as the product's inner product does: an SQ index trained for `dot`
 *    ranked them badly (on a 300-passage slice, 0.57 of brute force's top 20 against 0.98).
 * The product goes through retrieve() as the API calls it (demo-store's way): LEXICAL, FLAT (HNSW),
 * HYBRID, the default HYBRID_HIERARCHICAL with its default ranking parameters, and the exact forms
 * of FLAT and the default (`exact`: the ground truth of recall@k); its time is retrieve's
 * timings.searchMs (the statement, not the question's encoding). The peers' time is the wall time
 * of their query call in this process. Warm, one question at a time, every variant in a shuffled
 * order per question; ratios are p50 against FLAT's and LanceDB RRF's in the same run.
 *   BENCH_QUESTIONS (300, of the pydocs FAQ and pyapi questions)  BENCH_WARMUP (5)  BENCH_K (20)
 *   BENCH_SEED (20261202)  BENCH_KEEP=1 (keep the temporary folder)
 *   BENCH_DOCUMENTS=n (the corpus's first n documents, loaded fresh: a quick check of the bench itself)
 *   BENCH_BM25_INDEX=0 (measure the store without the BM25 index: LEXICAL and HYBRID's lexical side
 *   read the SQL postings; the copy's index is dropped). By default the copy gets the index
 *   (migration 0026, as every new store has it) where it lacks one (a load made before it was the
 *   default, or with PGLITE_BM25_INDEX=false).
 */
import 'reflect-metadata';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import type { Table } from '@lancedb/lancedb';
import { shuffle } from '../src/adapters/random';
import { corpusSetup } from '../src/cli/eval';
import { loadConfig } from '../src/config';
import { percentile } from '../src/eval/metrics';
import { buildPyapi } from '../src/eval/pyapi';
import { buildPydocs } from '../src/eval/pydocs';
import { loadCorpus } from '../src/eval/run';
import { packageRoot } from '../src/paths';
import { RETRIEVE_DEFAULTS } from '../src/retrieval/defaults';
import { DEFAULT_EF_FACTOR, DEFAULT_EF_SEARCH } from '../src/retrieval/types';
import type { RetrievalMode } from '../src/retrieval/modes';
import { retrieve } from '../src/retrieval/retrieve';
import type { Database } from '../src/store/db';
import { bm25Candidates, hasBm25Index, refreshBm25Index } from '../src/store/bm25-index';
import { dataFolderHolder } from '../src/store/data-lock';
import { migrationsDir } from '../src/store/migration-files';
import { PgliteDatabase } from '../src/store/pglite';
import { prng } from '../test/helpers/prng';

const questionCount = Number(process.env.BENCH_QUESTIONS ?? 300);
const warmup = Number(process.env.BENCH_WARMUP ?? 5);
const K = Number(process.env.BENCH_K ?? RETRIEVE_DEFAULTS.k2);
const seed = Number(process.env.BENCH_SEED ?? 20261202);
const keep = process.env.BENCH_KEEP === '1';
const documents = process.env.BENCH_DOCUMENTS ? Number(process.env.BENCH_DOCUMENTS) : undefined;
const withIndex = process.env.BENCH_BM25_INDEX !== '0';
// LanceDB logs two deprecation warnings a query otherwise; read when its native module loads.
process.env.LANCEDB_LOG ??= 'error';

const SCRATCH = 'bench_peers_bm25';
const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6;

interface Question {
  text: string;
  vector: Float32Array;
}
interface Variant {
  label: string;
  run: (q: Question) => Promise<{ ms: number; ids: number[] }>;
  /** The variant whose top k this one is held to (recall@k against an exact form, or plain overlap). */
  against?: string;
}

/** Complete cached pydocs loads (a corpus-stats.json is written last), copied without their locks. */
function copyCachedLoads(work: string): string[] {
  const cache = path.join(packageRoot(), '.cache', 'eval-corpus');
  const folders = existsSync(cache) ? readdirSync(cache).filter((f) => f.startsWith('pydocs-') && existsSync(path.join(cache, f, 'corpus-stats.json'))) : [];
  for (const f of folders) {
    const holder = dataFolderHolder(path.join(cache, f));
    if (holder) throw new Error(`${path.join(cache, f)} is held by process ${holder.pid}: run again once it is done (the copy would be torn)`);
    cpSync(path.join(cache, f), path.join(work, f), { recursive: true, filter: (s) => !/^(dhr\.lock(\.owner)?|postmaster\.pid)$/.test(path.basename(s)) });
  }
  return folders;
}

/**
 * Gives a copied store the BM25 index of migration 0026 where it has none (a load made before the
 * index was the default, or with PGLITE_BM25_INDEX=false, so 0026 ran there and created nothing):
 * the migration's own text, run again with pg_textsearch loaded, then the marker that makes later
 * opens load it.
 * Returns whether the store now has the index.
 */
/** BENCH_BM25_INDEX=0: the copy without the index, as PostgreSQL 15 reads BM25 (the bench writes nothing). */
async function dropBm25Index(folder: string): Promise<void> {
  const db = await PgliteDatabase.open({ dataDir: folder });
  try {
    await db.exec(`DROP TRIGGER IF EXISTS passages_search_texts_insert ON passages;
      DROP TRIGGER IF EXISTS passages_search_texts_update ON passages;
      DROP TABLE IF EXISTS passage_search_texts`);
  } finally {
    await db.close();
  }
}

async function addBm25Index(folder: string): Promise<{ built: boolean; ms: number }> {
  const started = process.hrtime.bigint();
  const db = await PgliteDatabase.open({ dataDir: folder, bm25Index: true });
  try {
    const had = await hasBm25Index(db);
    if (!had) await db.exec(readFileSync(path.join(migrationsDir(), '0026_bm25_index.sql'), 'utf8'));
    await refreshBm25Index(db);
    if (!(await hasBm25Index(db))) throw new Error(`${folder}: migration 0026 built no BM25 index (is pg_textsearch available?)`);
    return { built: !had, ms: ms(started) };
  } finally {
    await db.close();
  }
}

/** The scratch table's store: the product's PGlite when it loads pg_textsearch, else a second one. */
async function textsearchStore(
  db: Database,
  work: string,
): Promise<{ where: string; query: (sql: string, params: unknown[]) => Promise<unknown[]>; close: () => Promise<void> }> {
  const [loaded] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'pg_textsearch'`);
  if (loaded.n > 0) {
    await db.exec('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
    await db.exec(`CREATE TABLE ${SCRATCH} AS SELECT id, passage_search_text(title_path, text) AS body FROM passages`);
    return { where: "the product's own PGlite (its store loads pg_textsearch)", query: (sql, params) => db.query(sql, params), close: async () => undefined };
  }
  const second = await PGlite.create({ dataDir: path.join(work, 'textsearch'), extensions: { pg_textsearch } });
  await second.exec(`CREATE EXTENSION pg_textsearch; CREATE TABLE ${SCRATCH} (id int PRIMARY KEY, body text NOT NULL)`);
  for (let after = 0; ; ) {
    const rows = await db.query<{ id: number; body: string }>(
      `SELECT id, passage_search_text(title_path, text) AS body FROM passages WHERE id > $1 ORDER BY id LIMIT 5000`,
      [after],
    );
    if (rows.length === 0) break;
    await second.query(`INSERT INTO ${SCRATCH} SELECT * FROM unnest($1::int[], $2::text[])`, [rows.map((r) => r.id), rows.map((r) => r.body)]);
    after = rows[rows.length - 1].id;
  }
  return {
    where: "a second PGlite on disk (the product's store does not load pg_textsearch)",
    query: async (sql, params) => (await second.query(sql, params)).rows,
    close: () => second.close(),
  };
}

/** The passages' ids, search text and stored passage vectors in a LanceDB table, with its FTS and IVF-HNSW-SQ indexes. */
async function lanceTable(db: Database, passageModel: number, work: string): Promise<{ table: Table; rows: number; vectorType: string }> {
  const lancedb = await import('@lancedb/lancedb');
  const connection = await lancedb.connect(path.join(work, 'lance'));
  let table: Table | undefined;
  let rows = 0;
  for (let after = 0; ; ) {
    const batch = await db.query<{ id: number; text: string; vector: number[] }>(
      `SELECT p.id, passage_search_text(p.title_path, p.text) AS text, pe.embedding::real[] AS vector
       FROM passages p JOIN passage_embeddings pe ON pe.passage_id = p.id AND pe.model_id = $2
       WHERE p.id > $1 ORDER BY p.id LIMIT 4000`,
      [after, passageModel],
    );
    if (batch.length === 0) break;
    if (table) await table.add(batch);
    else table = await connection.createTable('passages', batch);
    rows += batch.length;
    after = batch[batch.length - 1].id;
  }
  if (!table) throw new Error('the store holds no passage vectors');
  await table.createIndex('text', { config: lancedb.Index.fts({ language: 'English', stem: true, removeStopWords: true, withPosition: false }) });
  await table.createIndex('vector', { config: lancedb.Index.hnswSq({ distanceType: 'cosine', numPartitions: 1 }) });
  const vectorType = String((await table.schema()).fields.find((f) => f.name === 'vector')?.type);
  return { table, rows, vectorType };
}

async function main() {
  const work = mkdtempSync(path.join(tmpdir(), 'dhr-bench-peers-'));
  try {
    await peers(work);
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
}

async function peers(work: string) {
  const config = loadConfig(process.env);
  const datasets = path.join(packageRoot(), '.cache', 'datasets');
  const pydocs = buildPydocs(datasets);
  const pyapi = buildPyapi(datasets);
  if (documents !== undefined) pydocs.documents = pydocs.documents.slice(0, documents);
  const copied = documents === undefined ? copyCachedLoads(work) : [];
  for (const f of copied) {
    if (!withIndex) {
      await dropBm25Index(path.join(work, f));
      continue;
    }
    const { built, ms: took } = await addBm25Index(path.join(work, f));
    if (built) console.log(`BM25 index: built in the copy of ${f} (migration 0026), ${(took / 1000).toFixed(1)} s`);
  }
  console.log(
    copied.length > 0
      ? `store: a copy of the eval's cached load ${copied.join(', ')} in ${work}`
      : `store: ${documents === undefined ? 'no cached pydocs load in .cache/eval-corpus, so ' : `${documents} documents only, so `}the eval's loader builds one in ${work} (≈ 25 min on 2 cores for the whole corpus)`,
  );
  const setup = { ...corpusSetup(config), corpusCacheDir: work };
  if (withIndex && copied.length === 0) {
    // A fresh load: made and closed first, so the index goes in as into a copy.
    await (await loadCorpus(pydocs, setup)).close();
    for (const f of readdirSync(work).filter((f) => f.startsWith('pydocs-'))) await addBm25Index(path.join(work, f));
  }
  const corpus = await loadCorpus(pydocs, setup);
  const { db, targets } = corpus;
  console.log(`passage BM25's candidates: ${await bm25Candidates(db)} (BENCH_BM25_INDEX=${withIndex ? '1' : '0'})`);
  const closers: (() => Promise<void>)[] = [];
  try {
    console.log(
      `corpus: ${corpus.stats.documents} documents, ${corpus.stats.passages} passages; passage model ${targets.passage.name} (${targets.passage.dimension}-d)`,
    );
    let started = process.hrtime.bigint();
    const textsearch = await textsearchStore(db, work);
    closers.push(textsearch.close);
    await textsearch.query(`CREATE INDEX ${SCRATCH}_idx ON ${SCRATCH} USING bm25(body) WITH (text_config='english', k1=1.2, b=0.75)`, []);
    console.log(`pg_textsearch: scratch table and bm25 index in ${textsearch.where}, ${(ms(started) / 1000).toFixed(1)} s`);
    started = process.hrtime.bigint();
    const lance = await lanceTable(db, targets.passage.id, work);
    closers.push(async () => lance.table.close());
    console.log(`LanceDB 0.31.0: ${lance.rows} rows (vector ${lance.vectorType}), FTS and IVF-HNSW-SQ indexes, ${(ms(started) / 1000).toFixed(1)} s`);

    // Questions: both labelled sets of this corpus, distinct texts, a seeded draw; the same vectors everywhere.
    const random = prng(seed);
    const texts = [...new Set([...pydocs.questions, ...pyapi.questions].map((q) => q.question))];
    const drawn = shuffle(
      texts.map((_, i) => i),
      random,
    ).map((i) => texts[i]);
    const questions: Question[] = [];
    for (const text of drawn.slice(0, questionCount + warmup)) questions.push({ text, vector: (await targets.encoders.encodeQuestion(text)).passage });
    const asked = questions.slice(0, questionCount);
    const rrf = await (await import('@lancedb/lancedb')).rerankers.RRFReranker.create();

    const product = (mode: RetrievalMode, exact?: boolean) => async (q: Question) => {
      const r = await retrieve(db, targets, { question: q.text, mode, k1: RETRIEVE_DEFAULTS.k1, k2: K }, { exact });
      return { ms: r.timings.searchMs, ids: r.passages.map((p) => p.passageId) };
    };
    const timed = async (call: () => Promise<{ id: number }[]>) => {
      const t0 = process.hrtime.bigint();
      const rows = await call();
      return { ms: ms(t0), ids: rows.map((r) => r.id) };
    };
    const vector = (q: Question) => lance.table.query().nearestTo(q.vector).distanceType('cosine').select(['id']).limit(K);
    // hnsw.ef_search as the product's FLAT sets it (retrieval/sql.ts): the same candidate list for both HNSW searches.
    const ef = Math.min(1000, Math.max(DEFAULT_EF_SEARCH, Math.ceil(DEFAULT_EF_FACTOR * K)));
    const variants: Variant[] = [
      { label: 'DHR LEXICAL', run: product('LEXICAL') },
      { label: 'DHR FLAT (HNSW)', run: product('FLAT'), against: 'DHR FLAT exact' },
      { label: 'DHR HYBRID', run: product('HYBRID') },
      { label: 'DHR HYBRID_HIERARCHICAL (default)', run: product('HYBRID_HIERARCHICAL'), against: 'DHR default exact' },
      { label: 'DHR FLAT exact', run: product('FLAT', true) },
      { label: 'DHR default exact', run: product('HYBRID_HIERARCHICAL', true) },
      {
        label: 'pg_textsearch bm25 top-k',
        run: (q) =>
          timed(
            () =>
              textsearch.query(`SELECT id FROM ${SCRATCH} ORDER BY body <@> to_bm25query($1, '${SCRATCH}_idx') LIMIT ${K}`, [q.text]) as Promise<
                { id: number }[]
              >,
          ),
        against: 'DHR LEXICAL',
      },
      {
        label: 'LanceDB FTS',
        run: (q) => timed(() => lance.table.query().fullTextSearch(q.text).select(['id']).limit(K).toArray()),
        against: 'pg_textsearch bm25 top-k',
      },
      { label: `LanceDB IVF-HNSW-SQ, ef ${ef}`, run: (q) => timed(() => vector(q).ef(ef).toArray()), against: 'LanceDB flat' },
      { label: 'LanceDB IVF-HNSW-SQ, its default ef', run: (q) => timed(() => vector(q).toArray()), against: 'LanceDB flat' },
      { label: 'LanceDB flat', run: (q) => timed(() => vector(q).bypassVectorIndex().toArray()), against: 'DHR FLAT exact' },
      { label: 'LanceDB RRF hybrid', run: (q) => timed(() => vector(q).ef(ef).fullTextSearch(q.text).rerank(rrf).toArray()) },
    ];
    const index = (label: string) => variants.findIndex((v) => v.label === label);

    // The product encodes the question itself: its vector must be the one the peers get.
    const check = await retrieve(db, targets, { question: asked[0].text, mode: 'FLAT', k1: RETRIEVE_DEFAULTS.k1, k2: K });
    const same = check.questionForPassages?.every((x, i) => x === asked[0].vector[i]) ?? false;
    console.log(
      `questions: ${asked.length} of ${texts.length} (the pydocs FAQ's ${pydocs.questions.length} and pyapi's ${pyapi.questions.length}), seed ${seed}, e.g. "${asked[0].text}"; ` +
        `warm-up ${warmup} others; k = ${K}, k1 = ${RETRIEVE_DEFAULTS.k1}; the product's question vector is the peers': ${same ? 'yes' : 'NO'}`,
    );
    for (const q of questions.slice(questionCount)) for (const v of variants) await v.run(q);
    const times = variants.map(() => [] as number[]);
    const tops = variants.map(() => [] as number[][]);
    const load = loadavg()[0];
    started = process.hrtime.bigint();
    for (const q of asked) {
      for (const x of shuffle(
        variants.map((_, i) => i),
        random,
      )) {
        const r = await variants[x].run(q);
        times[x].push(r.ms);
        tops[x].push(r.ids.slice(0, K));
      }
    }
    const overlap = (x: number, y: number) => {
      let shared = 0;
      let all = 0;
      tops[x].forEach((top, q) => {
        const truth = new Set(tops[y][q]);
        shared += top.filter((id) => truth.has(id)).length;
        all += truth.size;
      });
      return all === 0 ? 1 : shared / all;
    };
    const p50 = (x: number) => percentile(times[x], 50);
    const [flat, hybrid] = [index('DHR FLAT (HNSW)'), index('LanceDB RRF hybrid')];
    console.log(
      `\n${asked.length} questions in ${(ms(started) / 1000).toFixed(0)} s; ${cpus().length} cores, load average ${load.toFixed(2)} before the run, ${loadavg()[0].toFixed(2)} after\n`,
    );
    console.log(`| variant | p50 ms | p95 ms | p50 / DHR FLAT | p50 / LanceDB RRF hybrid | top-${K} overlap |`);
    console.log('|---|---:|---:|---:|---:|---|');
    variants.forEach((v, x) => {
      const y = v.against ? index(v.against) : -1;
      console.log(
        `| ${v.label} | ${p50(x).toFixed(2)} | ${percentile(times[x], 95).toFixed(2)} | ${(p50(x) / p50(flat)).toFixed(2)}× | ${(p50(x) / p50(hybrid)).toFixed(2)}× | ${
          y < 0 ? '–' : `${overlap(x, y).toFixed(3)} of ${v.against}'s`
        } |`,
      );
    });
    console.log(
      `\nrecall@${K} of the default against its exact form: ${overlap(index('DHR HYBRID_HIERARCHICAL (default)'), index('DHR default exact')).toFixed(3)}; ` +
        `LanceDB FTS against DHR LEXICAL: ${overlap(index('LanceDB FTS'), index('DHR LEXICAL')).toFixed(3)}`,
    );
  } finally {
    for (const close of closers.reverse()) await close();
    await corpus.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
