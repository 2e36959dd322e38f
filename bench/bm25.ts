/**
 * npm run bench:bm25 — BM25 retrieval (LEXICAL: passages; LEXICAL_DOCUMENTS: documents, BM25F)
 * latency and recall of the bounded candidate generation against exact BM25, at scale on a
 * PostgreSQL server.
 *
 * Corpus: bench/bm25-corpus.ts (Zipf–Mandelbrot text over 60,000 made-up words, stop words, topic
 * words per document; 10 passages a document of 30–90 words; title, abstract, section titles; seeded).
 * Tiers: BENCH_TIER=100k (10,000 documents, 100,000 passages) or 1m (100,000 / 1,000,000); 10k for a smoke run.
 * The corpus is loaded into a database `dhr_bench_bm25_<tier>` on DATABASE_URL's server (default
 * postgresql://postgres@127.0.0.1:5432/postgres) and kept for the next run; BENCH_FRESH=1 drops and
 * reloads it. The load goes through the product's triggers (migration 0007), as ingest does:
 * documents and passages in big unnest() batches (search NULL), then the full-text step
 * (src/store/lexical.ts indexLexical, UPDATE … SET search = to_tsvector(…)) BENCH_INDEX_DOCS
 * documents at a time, whose statement-level trigger writes the postings and statistics; then
 * VACUUM ANALYZE. BENCH_LOAD=rebuild replaces the full-text step and its triggers with the set-based
 * rebuild (src/store/bm25-rebuild.ts: postings written once, indexes built after; what a 1M load
 * needs on a small machine). The load record says which path loaded the corpus.
 *
 * Measured on the same questions through search(): LEXICAL and LEXICAL_DOCUMENTS bounded (the
 * product's default termCap, then each of BENCH_TERM_CAPS) in a seeded shuffled order per question,
 * then both exact (`exact: true`: every posting; the baseline of the speed-ups and the ground truth
 * of recall) in a block of their own afterwards.
 *   BENCH_QUESTIONS (200)  BENCH_QUESTION_SKIP (0: skip the stream's first n questions)  BENCH_SEED (20240611)  BENCH_WARMUP (5)  BENCH_BATCH (2000 documents/INSERT)
 *   BENCH_INDEX_DOCS (1000 documents per full-text UPDATE)  BENCH_TERM_CAPS ("1000,3000,30000")
 *   BENCH_EXPLAIN=0 (skip the EXPLAIN (ANALYZE, BUFFERS) of the slowest exact question)  BENCH_JSON=path
 *   BENCH_EXPERIMENT=1: two changes that src/ does not have, measured on the same corpus. (a) Covering
 *   impact indexes, `(lexeme, impact DESC) INCLUDE (…the columns the score reads)` on both postings
 *   tables, built beside the migration's (a later run without the flag drops them again): candidate
 *   generation becomes an index-only scan that stops after termCap entries, where the migration's
 *   impact index gives a bitmap heap scan of the whole posting list, then a sort. (b) Variants whose
 *   rescoring step probes the primary key per (candidate, term) (`CROSS JOIN LATERAL (… LIMIT 1)`)
 *   instead of the product's join, which the planner may run as a hash join over whole posting lists.
 */
import 'reflect-metadata';
import { search } from '../src/retrieval/search';
import { searchStatement, type VectorSearch } from '../src/retrieval/sql';
import type { RetrievalMode } from '../src/retrieval/modes';
import { DEFAULT_BM25, type SearchResult } from '../src/retrieval/types';
import type { Database } from '../src/store/db';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { prng } from '../test/helpers/prng';
import { openBenchDatabase } from './database';
import { makeVocabulary, questionPassages, questionsFrom, textTierSpec } from './bm25-corpus';
import { loadText, previousTextLoad } from './bm25-load';

const tier = (process.env.BENCH_TIER ?? '100k').toLowerCase();
const fresh = process.env.BENCH_FRESH === '1';
const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const spec = textTierSpec(tier, Number(process.env.BENCH_SEED ?? 20240611));
const questionCount = Number(process.env.BENCH_QUESTIONS ?? 200);
/** Questions are a seeded stream: skip its first n (e.g. those a setting was chosen on) to measure on others. */
const questionSkip = Number(process.env.BENCH_QUESTION_SKIP ?? 0);
const warmup = Number(process.env.BENCH_WARMUP ?? 5);
const batchDocuments = Number(process.env.BENCH_BATCH ?? 2000);
const indexDocuments = Number(process.env.BENCH_INDEX_DOCS ?? 1000);
const termCaps = (process.env.BENCH_TERM_CAPS ?? '1000,3000,30000')
  .split(',')
  .filter(Boolean)
  .map(Number)
  .filter((c) => c !== DEFAULT_BM25.termCap);
const explainSlowest = process.env.BENCH_EXPLAIN !== '0';
const jsonPath = process.env.BENCH_JSON;
const experiment = process.env.BENCH_EXPERIMENT === '1';
const loadPath = (process.env.BENCH_LOAD ?? 'triggers') as 'triggers' | 'rebuild';
if (!['triggers', 'rebuild'].includes(loadPath)) throw new Error(`BENCH_LOAD must be triggers or rebuild, not ${loadPath}`);
const K1 = 100;
const K2 = 20;
const RECALL_K = 20;
/** LEXICAL reads no vectors: the model refs are never used. */
const NO_MODEL = { id: 0, dimension: 1 };

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function openDatabase(drop: boolean): Promise<{ db: PostgresDatabase; name: string }> {
  const name = `dhr_bench_bm25_${tier}`;
  return { db: await openBenchDatabase(baseUrl, name, drop), name };
}

interface Variant {
  label: string;
  mode: RetrievalMode;
  termCap?: number;
  exact?: boolean;
  /** An experiment: the product's statement, changed. */
  rewrite?: (sql: string) => string;
}

/** BENCH_EXPERIMENT=1 (a): covering impact indexes beside the migration's; without the flag they are dropped. */
const COVERING = [
  { name: 'passage_postings_impact_cover_idx', table: 'passage_postings', include: 'document_id, passage_id, tf, length' },
  { name: 'document_postings_impact_cover_idx', table: 'document_postings', include: 'document_id, tf_body, tf_summary, length_body, length_summary' },
];

async function coveringIndexes(db: Database, wanted: boolean): Promise<void> {
  const present = await db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE indexname = ANY($1::text[])`, [COVERING.map((c) => c.name)]);
  if (!wanted) {
    for (const { indexname } of present) await db.exec(`DROP INDEX ${indexname}`);
    if (present.length > 0) console.log(`dropped the experiment's covering indexes (${present.map((p) => p.indexname).join(', ')})`);
    return;
  }
  for (const c of COVERING) {
    if (present.some((p) => p.indexname === c.name)) continue;
    const t = process.hrtime.bigint();
    await db.exec(`CREATE INDEX ${c.name} ON ${c.table} (lexeme, impact DESC) INCLUDE (${c.include})`);
    await db.exec(`VACUUM ANALYZE ${c.table}`);
    console.log(`  experiment: built ${c.name} in ${seconds(t).toFixed(1)} s`);
  }
  const sizes = await db.query<{ name: string; size: string }>(
    `SELECT c.relname AS name, pg_size_pretty(pg_relation_size(c.oid)) AS size FROM pg_class c
     WHERE c.relname IN ('passage_postings_impact_idx', 'document_postings_impact_idx', $1, $2) ORDER BY 1`,
    COVERING.map((c) => c.name),
  );
  console.log(`  index sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(', ')}`);
}

/** BENCH_EXPERIMENT=1 (b): rescoring probes the primary key once per (candidate, term). */
function rescoreByProbe(sql: string): string {
  const passages = 'JOIN passage_postings pp ON pp.lexeme = t.lexeme AND pp.document_id = c.document_id AND pp.passage_id = c.passage_id';
  const documents = 'JOIN document_postings dp ON dp.lexeme = t.lexeme AND dp.document_id = c.document_id';
  const out = sql
    .replace(
      passages,
      'CROSS JOIN LATERAL (SELECT pp.tf, pp.length FROM passage_postings pp WHERE pp.lexeme = t.lexeme AND pp.document_id = c.document_id AND pp.passage_id = c.passage_id LIMIT 1) pp',
    )
    .replace(documents, 'CROSS JOIN LATERAL (SELECT dp.* FROM document_postings dp WHERE dp.lexeme = t.lexeme AND dp.document_id = c.document_id LIMIT 1) dp');
  if (out === sql) throw new Error('rescoring join not found in the statement');
  return out;
}

type Row = { passages: SearchResult['passages']; documents: SearchResult['documents'] };

function overlap(a: number[], truth: number[], k: number): number {
  const t = new Set(truth.slice(0, k));
  if (t.size === 0) return 1;
  return a.slice(0, k).filter((id) => t.has(id)).length / t.size;
}

const ids = (v: Variant, r: SearchResult) => (v.mode === 'LEXICAL' ? r.passages.map((p) => p.passageId) : r.documents.map((d) => d.documentId));

async function explain(db: Database, s: VectorSearch, rewrite: (sql: string) => string = (sql) => sql): Promise<string[]> {
  const statement = searchStatement(s);
  return db.transaction(async (tx) => {
    for (const [name, value] of Object.entries(statement.settings)) await tx.query(`SELECT set_config($1, $2, true)`, [name, value]);
    const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${rewrite(statement.sql)}`, statement.params);
    return rows.map((r) => r['QUERY PLAN']);
  });
}

async function main() {
  let { db, name } = await openDatabase(fresh);
  try {
    console.log(`BM25 retrieval at scale — tier ${tier}, database ${name}`);
    await migrate(db);
    let record = await previousTextLoad(db, spec);
    if (!record) {
      const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
      if (n > 0) {
        console.log('the database holds another or an unfinished load: recreating it');
        await db.close();
        ({ db, name } = await openDatabase(true));
        await migrate(db);
        await previousTextLoad(db, spec);
      }
      record = await loadText(db, spec, { loadPath, batchDocuments, indexDocuments });
    } else {
      console.log(`reusing the corpus loaded ${record.loadedAt} (BENCH_FRESH=1 reloads); times of that load:`);
    }
    const loadTotal = record.rowsSeconds + record.indexSeconds + record.vacuumAnalyzeSeconds;
    console.log(
      `  rows ${record.rowsSeconds.toFixed(1)} s, full-text + postings (${record.loadPath ?? 'triggers'}) ${record.indexSeconds.toFixed(1)} s, VACUUM ANALYZE ${record.vacuumAnalyzeSeconds.toFixed(1)} s; total ${(loadTotal / 60).toFixed(1)} min`,
    );

    await coveringIndexes(db, experiment);
    const sizes = await db.query<{ name: string; total: string; heap: string; indexes: string; rows: string }>(
      `SELECT c.relname AS name, pg_size_pretty(pg_total_relation_size(c.oid)) AS total, pg_size_pretty(pg_relation_size(c.oid)) AS heap,
              pg_size_pretty(pg_indexes_size(c.oid)) AS indexes, c.reltuples::bigint::text AS rows
       FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
         AND c.relname IN ('passages', 'documents', 'passage_postings', 'document_postings', 'bm25_terms', 'document_lengths') ORDER BY pg_total_relation_size(c.oid) DESC`,
    );
    console.log('\n| table | rows (est.) | total | heap | indexes |\n|---|---:|---:|---:|---:|');
    for (const s of sizes) console.log(`| ${s.name} | ${Number(s.rows).toLocaleString('en-US')} | ${s.total} | ${s.heap} | ${s.indexes} |`);
    const [stats] = await db.query<{ p: string; d: string; terms_p: number; terms_d: number; avgdl_p: number; max_df: number }>(
      // statistics summed over their rows (writer slots, migration 0013), as retrieval reads them
      `WITH st AS (SELECT level, sum(items) AS items, sum(total_length) AS total_length FROM bm25_stats GROUP BY level),
            tm AS (SELECT level, lexeme, sum(df) AS df FROM bm25_terms GROUP BY level, lexeme)
       SELECT (SELECT items FROM st WHERE level = 'p')::text AS p, (SELECT items FROM st WHERE level = 'd')::text AS d,
              (SELECT count(*) FROM tm WHERE level = 'p' AND df > 0)::int AS terms_p, (SELECT count(*) FROM tm WHERE level = 'd' AND df > 0)::int AS terms_d,
              (SELECT total_length / greatest(items, 1) FROM st WHERE level = 'p')::float8 AS avgdl_p,
              (SELECT max(df) FROM tm WHERE level = 'p')::int AS max_df`,
    );
    console.log(
      `\nbm25_stats: ${Number(stats.p).toLocaleString()} passages (avg length ${fmt(stats.avgdl_p)} lexemes), ${Number(stats.d).toLocaleString()} documents; ` +
        `${stats.terms_p.toLocaleString()} passage lexemes, ${stats.terms_d.toLocaleString()} document lexemes; largest passage df ${stats.max_df.toLocaleString()}`,
    );

    // Questions from random passages' text.
    const targets = questionPassages(spec, questionSkip + questionCount);
    const texts = await db.query<{ id: number; text: string }>('SELECT id, text FROM passages WHERE id = ANY($1::int[])', [targets]);
    const byId = new Map(texts.map((r) => [r.id, r.text]));
    const rankOf = new Map(makeVocabulary(spec.vocabulary, spec.seed).map((w, i) => [w, i]));
    const questions = questionsFrom(
      spec,
      targets.map((t) => byId.get(t)!),
      rankOf,
    ).slice(questionSkip);
    const postings = await db.query<{ q: number; n: number; terms: number; max_df: number }>(
      `SELECT u.q::int AS q, coalesce(sum(bt.df), 0)::int AS n, count(bt.df)::int AS terms, coalesce(max(bt.df), 0)::int AS max_df
       FROM unnest($1::text[]) WITH ORDINALITY AS u(text, q)
       LEFT JOIN LATERAL (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english'::regconfig, u.text))) l ON true
       LEFT JOIN LATERAL (SELECT sum(df) AS df FROM bm25_terms WHERE level = 'p' AND lexeme = l.lexeme HAVING count(*) > 0) bt ON true GROUP BY u.q ORDER BY u.q`,
      [questions],
    );
    const sortedPostings = postings.map((p) => p.n).sort((a, b) => a - b);
    const commonTerms = postings.filter((p) => p.max_df > DEFAULT_BM25.termCap).length;
    console.log(
      `questions: ${questions.length}, e.g. "${questions[0]}", "${questions[1]}"; passage postings per question (Σ df): ` +
        `p50 ${percentile(sortedPostings, 50).toLocaleString()}, p95 ${percentile(sortedPostings, 95).toLocaleString()}, max ${sortedPostings[sortedPostings.length - 1].toLocaleString()}; ` +
        `${commonTerms} of ${questions.length} have a term in more than termCap = ${DEFAULT_BM25.termCap.toLocaleString()} passages`,
    );

    const request = (v: Variant, q: number): VectorSearch => ({
      mode: v.mode,
      documentModel: NO_MODEL,
      passageModel: NO_MODEL,
      questionText: questions[q],
      k1: K1,
      k2: K2,
      lambda: 1,
      exact: v.exact,
      bm25: v.termCap ? { termCap: v.termCap } : undefined,
    });
    const variants: Variant[] = [
      { label: `LEXICAL, termCap ${DEFAULT_BM25.termCap.toLocaleString()} (default)`, mode: 'LEXICAL' },
      ...termCaps.map((c) => ({ label: `LEXICAL, termCap ${c.toLocaleString()}`, mode: 'LEXICAL' as const, termCap: c })),
      { label: `LEXICAL_DOCUMENTS, termCap ${DEFAULT_BM25.termCap.toLocaleString()} (default)`, mode: 'LEXICAL_DOCUMENTS' },
      ...termCaps.map((c) => ({ label: `LEXICAL_DOCUMENTS, termCap ${c.toLocaleString()}`, mode: 'LEXICAL_DOCUMENTS' as const, termCap: c })),
      ...(experiment
        ? [
            {
              label: `LEXICAL, termCap ${DEFAULT_BM25.termCap.toLocaleString()}, rescoring by primary-key probes`,
              mode: 'LEXICAL' as const,
              rewrite: rescoreByProbe,
            },
            {
              label: `LEXICAL_DOCUMENTS, termCap ${DEFAULT_BM25.termCap.toLocaleString()}, rescoring by primary-key probes`,
              mode: 'LEXICAL_DOCUMENTS' as const,
              rewrite: rescoreByProbe,
            },
          ]
        : []),
      { label: 'LEXICAL exact (baseline, ground truth)', mode: 'LEXICAL', exact: true },
      { label: 'LEXICAL_DOCUMENTS exact (baseline, ground truth)', mode: 'LEXICAL_DOCUMENTS', exact: true },
    ];
    const exactOf = (v: Variant) => variants.findIndex((x) => x.exact && x.mode === v.mode);

    const times = variants.map(() => [] as number[]);
    const results = variants.map(() => [] as SearchResult[]);
    const run = async (v: Variant, q: number): Promise<SearchResult> => {
      if (!v.rewrite) return search(db, request(v, q));
      const statement = searchStatement(request(v, q), db.vectorParam?.bind(db));
      const [row] = await db.queryWithSettings<Row>(statement.settings, v.rewrite(statement.sql), statement.params);
      return { passages: row.passages, documents: row.documents, questionTerms: null };
    };
    const timeOne = async (k: number, q: number) => {
      const t0 = process.hrtime.bigint();
      results[k][q] = await run(variants[k], q);
      times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
    };
    console.log(`\nwarm-up: ${warmup} questions × ${variants.length} variants`);
    for (let k = 0; k < variants.length; k++) for (let i = 0; i < Math.min(warmup, questions.length); i++) await run(variants[k], questions.length - 1 - i);
    console.log(
      `timing: ${questions.length} questions, bounded variants in a shuffled order per question, then the exact ones in a block (k1=${K1} documents, k2=${K2} passages)`,
    );
    const started = process.hrtime.bigint();
    const bounded = variants.map((_, k) => k).filter((k) => !variants[k].exact);
    const rand = prng(spec.seed + 3);
    for (let q = 0; q < questions.length; q++) {
      for (let i = bounded.length - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [bounded[i], bounded[j]] = [bounded[j], bounded[i]];
      }
      for (const k of bounded) await timeOne(k, q);
      if ((q + 1) % 50 === 0) console.log(`  … ${q + 1} questions (${seconds(started).toFixed(0)} s)`);
    }
    for (let k = 0; k < variants.length; k++) {
      if (!variants[k].exact) continue;
      for (let q = 0; q < questions.length; q++) await timeOne(k, q);
      console.log(`  … ${variants[k].label} (${seconds(started).toFixed(0)} s)`);
    }

    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const answered = results[exactOf(variants[0])].filter((r, q) => r.passages.some((p) => p.passageId === targets[questionSkip + q])).length;
    console.log(`\nthe question's own passage is in the exact BM25 top-${K2} for ${answered}/${questions.length} questions`);
    console.log(`\n| variant | p50 ms | p95 ms | p99 ms | speed-up vs exact (p50) | recall@${RECALL_K} vs exact | recall@${K1} vs exact (documents) |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    const summary: { label: string; p50: number; p95: number; p99: number; speedup: number; recall: number; recallK1?: number }[] = [];
    variants.forEach((v, k) => {
      const sorted = [...times[k]].sort((a, b) => a - b);
      const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(sorted, p));
      const e = exactOf(v);
      const base = percentile(
        [...times[e]].sort((a, b) => a - b),
        50,
      );
      const recall = mean(results[k].map((r, q) => overlap(ids(v, r), ids(variants[e], results[e][q]), RECALL_K)));
      const recallK1 = v.mode === 'LEXICAL_DOCUMENTS' ? mean(results[k].map((r, q) => overlap(ids(v, r), ids(variants[e], results[e][q]), K1))) : undefined;
      summary.push({ label: v.label, p50, p95, p99, speedup: base / p50, recall, recallK1 });
      console.log(
        `| ${v.label} | ${fmt(p50, 2)} | ${fmt(p95, 2)} | ${fmt(p99, 2)} | ${fmt(base / p50, 2)}× | ${fmt(recall, 3)} | ${recallK1 === undefined ? '—' : fmt(recallK1, 3)} |`,
      );
    });
    const d = summary[0];
    console.log(
      `\ntarget (issue: at 1M, on a 16-core machine): LEXICAL p50 ≤ 20 ms: ${d.p50 <= 20 ? 'met' : 'NOT met'} (${fmt(d.p50, 2)} ms); ` +
        `recall@${RECALL_K} ≥ 0.98 vs exact: ${d.recall >= 0.98 ? 'met' : 'NOT met'} (${fmt(d.recall, 3)})${tier === '1m' ? '' : `  [this is the ${tier} tier]`}`,
    );

    if (jsonPath) {
      const { writeFileSync } = await import('node:fs');
      const [{ version }] = await db.query<{ version: string }>(
        `SELECT version() || ', shared_buffers ' || current_setting('shared_buffers') || ', work_mem ' || current_setting('work_mem') AS version`,
      );
      writeFileSync(
        jsonPath,
        JSON.stringify(
          { tier, experiment, questions: questions.length, server: version, cpus: (await import('node:os')).cpus().length, load: record, sizes, summary },
          null,
          2,
        ),
      );
    }

    if (explainSlowest) {
      const exactLexical = exactOf(variants[0]);
      const slowest = times[exactLexical].indexOf(Math.max(...times[exactLexical]));
      console.log(
        `\nslowest exact LEXICAL question: #${slowest} "${questions[slowest]}" (Σ df ${postings[slowest].n.toLocaleString()}, largest df ${postings[slowest].max_df.toLocaleString()})`,
      );
      const shown = variants.filter((v) => !v.termCap && (v.mode === 'LEXICAL' || !v.exact));
      for (const v of shown) {
        console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of ${v.label}:`);
        for (const line of await explain(db, request(v, slowest), v.rewrite)) console.log(`    ${line}`);
      }
    }

    if (tier !== '1m') {
      const factor = tier === '10k' ? 100 : 10;
      console.log(`\nestimate for BENCH_TIER=1m from this run: load ≈ ${((loadTotal * factor) / 60).toFixed(0)} min (if linear)`);
    }
  } finally {
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
