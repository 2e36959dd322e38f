/**
 * npm run bench:ingest — structure-only ingest throughput (no embeddings) of a generated corpus,
 * with BM25 maintained: every figure is rows written, full-text vectors filled and BM25 postings
 * and statistics up to date.
 * Prints passages/s for the bulk path (`ingest` with many documents: batches of documents per
 * transaction, BM25 built once a batch) and, as the baseline measured in the same run on the same
 * corpus, today's per-document path (one transaction per document, the BM25 triggers of migration
 * 0007, then the full-text index step whose trigger writes the postings). Each path gets a fresh
 * store, so neither pays for the other's rows; into an empty store on PostgreSQL the bulk path builds
 * the postings' indexes once at its end (store/deferred-indexes.ts), so there it is also timed with
 * them kept as it writes, as into a store that holds postings.
 * Runs on embedded PGlite (a temporary directory) and, when DATABASE_URL is set, on that server
 * (in fresh databases it creates and drops).
 *   BENCH_DOCUMENTS (3000, 10 passages each)  BENCH_CONCURRENCY (4)  BENCH_BATCH_PASSAGES (2000)
 * BENCH_COMPARE=collation (or BENCH_COLLATION=compare): instead, each path twice with the lexeme
 * columns under the database's default collation (migration 0020 undone on the fresh store) and
 * twice under COLLATE "C" (order default, C, C, default: a steady drift in load touches both alike),
 * and the ratio C / default of each path. BENCH_COMPARE=passage-key: the same with migration 0021
 * undone (the plain (document_id, ordinal) key) against the key that INCLUDEs the passage id;
 * BENCH_COMPARE=postings-by-document: the postings' keys as migrated (lexeme first) against the same
 * keys document first (tried, not adopted). With
 * DATABASE_URL set, a comparison runs on the server only (PGlite's databases have collation C).
 * BENCH_INTO=<database> (on DATABASE_URL's server, e.g. dhr_bench_hybrid_1m, which bench:hybrid
 * loads): instead, the bulk path into a large store, BENCH_ROUNDS (2) times into one copy of it
 * (CREATE DATABASE … TEMPLATE, dropped after) — each round BENCH_DOCUMENTS new documents of the BM25
 * bench's Zipf vocabulary, 10 passages each — with the WAL it wrote and the checkpoints it caused
 * (server-wide counters: run it alone). The fresh-store figures hide what a large store costs: a
 * batch's postings land on random leaves of large B-trees (docs/benchmarks.md).
 */
import 'reflect-metadata';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS, type DocumentInput } from '../src/ingest/types';
import type { Database } from '../src/store/db';
import { ingest, type IngestEvent } from '../src/pipeline/ingest';
import { BULK_BATCH_PASSAGES } from '../src/pipeline/bulk-ingest';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { PostgresDatabase } from '../src/store/postgres';
import { generateCorpus } from './corpus';
import { TextCorpus, textTierSpec } from './bm25-corpus';

const documents = Number(process.env.BENCH_DOCUMENTS ?? 3_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);
const batchPassages = Number(process.env.BENCH_BATCH_PASSAGES ?? BULK_BATCH_PASSAGES);
/** Migration 0020 undone: the lexeme columns as they were before it. */
const DEFAULT_COLLATION = ['passage_postings', 'document_postings', 'bm25_terms'].map(
  (t) => `ALTER TABLE ${t} ALTER COLUMN lexeme TYPE text COLLATE "default"`,
);

/**
 * What BENCH_COMPARE measures: the store as migrated (`after`) against it with one migration undone
 * (`before`), or the store as migrated (`before`) against a change tried on it (`apply`, `after`).
 */
const COMPARISONS = {
  collation: { before: 'lexemes default', after: 'lexemes C', ratio: 'C / default', undo: DEFAULT_COLLATION },
  'passage-key': {
    before: 'plain key',
    after: 'key INCLUDE (id)',
    ratio: 'INCLUDE / plain',
    undo: [
      'ALTER TABLE passages DROP CONSTRAINT passages_document_id_ordinal_key, ADD CONSTRAINT passages_document_id_ordinal_key UNIQUE (document_id, ordinal)',
    ],
  },
  // Tried, not adopted (docs/benchmarks.md): the store as migrated against it with the
  // postings keyed document first.
  'postings-by-document': {
    before: 'keys lexeme first',
    after: 'keys document first',
    ratio: 'document first / lexeme first',
    undo: [],
    apply: [
      'ALTER TABLE passage_postings DROP CONSTRAINT passage_postings_pkey, ADD CONSTRAINT passage_postings_pkey PRIMARY KEY (document_id, lexeme, passage_id) INCLUDE (tf, length)',
      'ALTER TABLE document_postings DROP CONSTRAINT document_postings_pkey, ADD CONSTRAINT document_postings_pkey PRIMARY KEY (document_id, lexeme) INCLUDE (tf_body, tf_summary, length_body, length_summary)',
      'DROP INDEX document_postings_document_idx',
    ],
  },
} as const;
const compareName = process.env.BENCH_COMPARE ?? (process.env.BENCH_COLLATION === 'compare' ? 'collation' : undefined);
if (compareName !== undefined && !(compareName in COMPARISONS)) throw new Error(`BENCH_COMPARE: one of ${Object.keys(COMPARISONS).join(', ')}`);
const comparison: { before: string; after: string; ratio: string; undo: readonly string[]; apply?: readonly string[] } | undefined =
  compareName === undefined ? undefined : COMPARISONS[compareName as keyof typeof COMPARISONS];

type Open = () => Promise<{ db: Database; cleanup: () => Promise<void> }>;

/**
 * The machine's busy CPU seconds so far, all cores (Linux /proc/stat; null elsewhere): with Node's
 * own, what a path costs whatever the cores, so the rate it could reach on this machine is
 * cores / (CPU seconds a passage) (the database runs on the same machine here).
 */
function machineBusySeconds(): number | null {
  if (!existsSync('/proc/stat')) return null;
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

async function measure(label: string, db: Database, passages: number, run: () => Promise<void>): Promise<number> {
  db.statements.reset();
  const busy = machineBusySeconds();
  const node = process.cpuUsage();
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const nodeSeconds = (({ user, system }) => (user + system) / 1e6)(process.cpuUsage(node));
  const busySeconds = busy === null ? null : machineBusySeconds()! - busy;
  const rate = passages / seconds;
  console.log(
    `  ${label.padEnd(44)} ${passages.toString().padStart(7)} passages  ${seconds.toFixed(2).padStart(7)} s  ` +
      `${rate.toFixed(0).padStart(7)} passages/s  ${(db.statements.count / passages).toFixed(3)} statements/passage`,
  );
  if (busySeconds !== null) {
    // PGlite runs inside Node's one thread: its ceiling is one core, whatever the machine has.
    const ceiling =
      db.kind === 'postgres'
        ? `${((cpus().length * passages) / busySeconds).toFixed(0)} passages/s on these cores`
        : `${(passages / nodeSeconds).toFixed(0)} passages/s (PGlite: Node's one thread)`;
    console.log(
      `    CPU: the machine ${busySeconds.toFixed(2)} s busy of ${(seconds * cpus().length).toFixed(2)} (${cpus().length} cores), Node ${nodeSeconds.toFixed(2)} s; ` +
        `${((busySeconds / passages) * 1e6).toFixed(0)} µs a passage, so at most ${ceiling}`,
    );
  }
  return rate;
}

/** Both paths must leave the same BM25 statistics (the tests compare every row; this is a cheap guard). */
async function bm25Stats(db: Database): Promise<string> {
  // Summed over the level's rows (one per writer slot since migration 0013).
  const rows = await db.query(
    `SELECT level, sum(items)::int AS items, sum(total_length) AS total_length, sum(total_summary) AS total_summary,
            (SELECT count(*)::int FROM passage_postings) AS postings FROM bm25_stats GROUP BY level ORDER BY level`,
  );
  return JSON.stringify(rows);
}

async function benchOne(name: string, open: Open) {
  const corpus = generateCorpus(documents);
  // Preparing (splitting, summaries, content hashes) is Node's share of every path: timed here alone.
  const prepareStarted = process.hrtime.bigint();
  const totalPassages = corpus.reduce((n, d) => n + prepareDocument(d, DEFAULT_INGEST_OPTIONS).passages.length, 0);
  const prepareSeconds = Number(process.hrtime.bigint() - prepareStarted) / 1e9;
  const workers = `concurrency ${concurrency}`;
  console.log(`\n${name}: ${documents} documents, ${totalPassages} passages, each path in a fresh store`);
  console.log(`  preparing them alone (Node, one thread): ${prepareSeconds.toFixed(2)} s, ${(totalPassages / prepareSeconds).toFixed(0)} passages/s`);

  const run = async (label: string, bulk: boolean, undone = false, deferIndexesFrom?: number): Promise<{ rate: number; stats: string; again?: number }> => {
    const { db, cleanup } = await open();
    try {
      await migrate(db);
      for (const sql of (undone ? comparison?.undo : comparison?.apply) ?? []) await db.exec(sql);
      // The bulk path's last batch commit: what follows it is the deferred index build (and the index step's check).
      let lastCommit = 0n;
      const onEvent = (e: IngestEvent) => {
        if (e.stage === 'batch' && e.committed) lastCommit = process.hrtime.bigint();
      };
      const rate = await measure(label, db, totalPassages, async () => {
        const result = await ingest(db, corpus, { ...DEFAULT_INGEST_OPTIONS, concurrency, bulk, batchPassages, deferIndexesFrom, onEvent });
        if (result.failed > 0 || result.created !== documents) throw new Error(`expected ${documents} created, got ${JSON.stringify(result)}`);
        if (result.indexed !== totalPassages) throw new Error(`expected every passage indexed, got ${result.indexed}`);
      });
      if (bulk && lastCommit > 0n) {
        console.log(
          `    of which after its last batch committed (the deferred indexes built, if any): ${(Number(process.hrtime.bigint() - lastCommit) / 1e9).toFixed(2)} s`,
        );
      }
      const stats = await bm25Stats(db);
      let again: number | undefined;
      if (bulk) {
        again = await measure('  re-ingest, unchanged (no-op)', db, totalPassages, async () => {
          const result = await ingest(db, corpus, { ...DEFAULT_INGEST_OPTIONS, concurrency, bulk, batchPassages });
          if (result.unchanged !== documents) throw new Error('expected every document unchanged');
        });
      }
      return { rate, stats, again };
    } finally {
      await cleanup();
    }
  };

  if (comparison) {
    for (const bulk of [false, true]) {
      const path = bulk ? `bulk (${workers})` : `per document (${workers})`;
      const rates = { before: [] as number[], after: [] as number[] };
      let stats: string | undefined;
      for (const side of ['before', 'after', 'after', 'before'] as const) {
        const r = await run(`${path}, ${comparison[side]}`, bulk, side === 'before');
        if (stats !== undefined && r.stats !== stats) throw new Error(`BM25 statistics differ: ${stats} vs ${r.stats}`);
        stats = r.stats;
        rates[side].push(r.rate);
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      console.log(`  ratio ${path}, ${comparison.ratio}: ${(mean(rates.after) / mean(rates.before)).toFixed(2)}x (means of 2)`);
    }
    return;
  }
  const base = await run(`today: per document + triggers (${workers})`, false);
  const bulk = await run(`bulk: ${batchPassages} passages a batch (${workers})`, true);
  if (name.startsWith('PostgreSQL')) {
    // The bulk path into a store that holds postings already keeps their indexes as it writes.
    const kept = await run(`bulk, postings indexed as written (as into a store with postings)`, true, false, 0);
    if (kept.stats !== bulk.stats) throw new Error(`BM25 statistics differ: ${bulk.stats} vs ${kept.stats}`);
    console.log(`  ratio bulk / bulk with the postings indexed as written: ${(bulk.rate / kept.rate).toFixed(2)}x`);
  }
  if (bulk.stats !== base.stats) throw new Error(`BM25 statistics differ: ${base.stats} vs ${bulk.stats}`);
  console.log(`  ratio bulk / today: ${(bulk.rate / base.rate).toFixed(2)}x   (BM25 statistics equal: ${bulk.stats})`);
}

/** `count` documents of the BM25 bench's text (title, an abstract of 2 passages, sections of the rest), keys and stream unique to `seed`. */
function textDocuments(count: number, seed: number): DocumentInput[] {
  // The vocabulary of bench:hybrid's and bench:bm25's stores (their seed), another stream of documents.
  const b = new TextCorpus({ ...textTierSpec('1m'), documents: count }, seed).nextDocuments(count);
  const per = b.texts.length / b.ids.length;
  return b.ids.map((id, i) => {
    const texts = b.texts.slice(i * per, (i + 1) * per);
    const titles = b.sectionTitles.slice(i * per, (i + 1) * per);
    const sections = [...new Set(titles.slice(2))].map((title) => ({
      title,
      text: texts.filter((_, j) => j >= 2 && titles[j] === title).join('\n\n'),
    }));
    return { key: `bench-into/${seed}/${id}`, title: b.titles[i], abstract: texts.slice(0, 2).join('\n\n'), sections };
  });
}

async function benchInto(url: string, source: string) {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const name = `dhr_bench_into_${process.pid}`;
  const server = async () =>
    (
      await admin.query<{ lsn: string; checkpoints: string }>(
        'SELECT pg_current_wal_lsn()::text AS lsn, (checkpoints_req + checkpoints_timed)::text AS checkpoints FROM pg_stat_bgwriter',
      )
    ).rows[0];
  console.log(`\nPostgreSQL server: bulk ingest into a copy of ${source}, ${rounds} × ${documents} new documents`);
  const copyStarted = Date.now();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${source}`);
  console.log(`  copied in ${((Date.now() - copyStarted) / 1000).toFixed(1)} s`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = new PostgresDatabase({ url: target.toString(), maxConnections: concurrency + 1 });
  try {
    const [{ count }] = await db.query<{ count: number }>('SELECT count(*)::int AS count FROM passages');
    console.log(
      `  the store holds ${count} passages; ${JSON.stringify(await admin.query('SHOW shared_buffers').then((r) => r.rows[0]))}, ${JSON.stringify(await admin.query('SHOW max_wal_size').then((r) => r.rows[0]))}`,
    );
    for (let round = 1; round <= rounds; round++) {
      const corpus = textDocuments(documents, 9_000 + round);
      const passages = corpus.reduce((n, d) => n + prepareDocument(d, DEFAULT_INGEST_OPTIONS).passages.length, 0);
      const before = await server();
      await measure(`bulk into the store, round ${round}`, db, passages, async () => {
        const result = await ingest(db, corpus, { ...DEFAULT_INGEST_OPTIONS, concurrency, bulk: true, batchPassages });
        if (result.failed > 0 || result.created !== documents) throw new Error(`expected ${documents} created, got ${JSON.stringify(result)}`);
      });
      const after = await server();
      const wal = await admin.query<{ mb: string }>('SELECT round(pg_wal_lsn_diff($1, $2) / 1048576.0)::text AS mb', [after.lsn, before.lsn]);
      console.log(
        `    WAL ${wal.rows[0].mb} MB (${((Number(wal.rows[0].mb) * 1024) / passages).toFixed(0)} kB a passage), checkpoints ${Number(after.checkpoints) - Number(before.checkpoints)}`,
      );
    }
  } finally {
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function main() {
  if (process.env.BENCH_INTO) {
    if (!process.env.DATABASE_URL) throw new Error('BENCH_INTO needs DATABASE_URL (the server that holds the database)');
    if (!/^[a-z_][a-z0-9_]*$/.test(process.env.BENCH_INTO)) throw new Error('BENCH_INTO: a database name (lower case, digits, _)');
    return benchInto(process.env.DATABASE_URL, process.env.BENCH_INTO);
  }
  // PGlite's database collation is C already: a comparison runs on the server when there is one.
  if (!(comparison && process.env.DATABASE_URL))
    await benchOne('PGlite (embedded, on disk)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dhr-bench-'));
      const db = await PgliteDatabase.open({ dataDir: dir });
      return {
        db,
        cleanup: async () => {
          await db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    });
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log('\nDATABASE_URL not set: skipping the PostgreSQL server run');
    return;
  }
  let n = 0;
  await benchOne(`PostgreSQL server`, async () => {
    const name = `dhr_bench_${process.pid}_${n++}`;
    const admin = new Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const target = new URL(url);
    target.pathname = `/${name}`;
    const db = new PostgresDatabase({ url: target.toString(), maxConnections: concurrency + 1 });
    return {
      db,
      cleanup: async () => {
        await db.close();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
