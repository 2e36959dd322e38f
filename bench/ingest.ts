/**
 * npm run bench:ingest — structure-only ingest throughput (no embeddings) of a generated corpus.
 * Prints passages/s for the product's batched path and, as the baseline measured in the same run,
 * a row-at-a-time writer (one INSERT per section and passage: what batching avoids).
 * Runs on embedded PGlite (a temporary directory) and, when DATABASE_URL is set, on that server
 * (in a fresh database it creates and drops).
 *   BENCH_DOCUMENTS (10000)  BENCH_BASELINE_DOCUMENTS (1000)  BENCH_CONCURRENCY (4)
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS, type PreparedDocument } from '../src/ingest/types';
import type { Database } from '../src/store/db';
import { ingestDocuments } from '../src/pipeline/ingest';
import { indexLexical } from '../src/store/lexical';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { PostgresDatabase } from '../src/store/postgres';
import { generateCorpus } from './corpus';

const documents = Number(process.env.BENCH_DOCUMENTS ?? 10_000);
const baselineDocuments = Number(process.env.BENCH_BASELINE_DOCUMENTS ?? 1_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 4);

/** The baseline: same rows, one statement per row, one transaction per document. */
async function rowAtATime(db: Database, doc: PreparedDocument): Promise<void> {
  await db.transaction(async (tx) => {
    const [{ id }] = await tx.query<{ id: number }>(
      `INSERT INTO documents (key, title, abstract, summary, source, metadata, content_hash)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING id`,
      [doc.key, doc.title, doc.abstract, doc.summary, doc.source, JSON.stringify(doc.metadata), doc.contentHash],
    );
    const sectionIds: number[] = [];
    for (const s of doc.sections) {
      const [row] = await tx.query<{ id: number }>(
        `INSERT INTO sections (document_id, parent_id, title, depth, ordinal, position, title_path)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
        [id, s.parentPosition === null ? null : sectionIds[s.parentPosition], s.title, s.depth, s.ordinal, s.position, s.titlePath],
      );
      sectionIds.push(row.id);
    }
    for (const p of doc.passages) {
      await tx.query(
        `INSERT INTO passages (document_id, section_id, ordinal, text, title_path, word_count) VALUES ($1, $2, $3, $4, $5, $6)`,
        [id, p.sectionPosition === null ? null : sectionIds[p.sectionPosition], p.ordinal, p.text, p.titlePath, p.wordCount],
      );
    }
  });
}

async function measure(label: string, db: Database, passages: number, run: () => Promise<void>): Promise<number> {
  db.statements.reset();
  const started = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rate = passages / seconds;
  console.log(
    `  ${label.padEnd(34)} ${passages.toString().padStart(7)} passages  ${seconds.toFixed(2).padStart(7)} s  ` +
      `${rate.toFixed(0).padStart(7)} passages/s  ${(db.statements.count / passages).toFixed(2)} statements/passage`,
  );
  return rate;
}

async function benchOne(name: string, open: () => Promise<{ db: Database; cleanup: () => Promise<void> }>) {
  const corpus = generateCorpus(documents);
  const baselineCorpus = generateCorpus(baselineDocuments, 7).map((d) => ({ ...d, key: `baseline/${d.key}` }));
  const prepared = baselineCorpus.map((d) => prepareDocument(d, DEFAULT_INGEST_OPTIONS));
  const totalPassages = corpus.reduce((n, d) => n + prepareDocument(d, DEFAULT_INGEST_OPTIONS).passages.length, 0);
  const baselinePassages = prepared.reduce((n, d) => n + d.passages.length, 0);

  console.log(`\n${name}: ${documents} documents, ${totalPassages} passages (baseline: ${baselineDocuments} documents)`);
  const { db, cleanup } = await open();
  try {
    await migrate(db);
    const base = await measure('baseline: row at a time', db, baselinePassages, async () => {
      for (const doc of prepared) await rowAtATime(db, doc);
    });
    const ours = await measure(`dhr ingest (concurrency ${db.kind === 'postgres' ? concurrency : 1})`, db, totalPassages, async () => {
      const summary = await ingestDocuments(db, corpus, { ...DEFAULT_INGEST_OPTIONS, concurrency });
      if (summary.failed > 0) throw new Error(`${summary.failed} documents failed`);
    });
    // LEXICAL's full-text vectors are a separate, set-based step after the writes (as in the product).
    // (The baseline's passages are indexed too: counted in.)
    const lexical = await measure('full-text indexing (indexLexical)', db, totalPassages + baselinePassages, async () => {
      if ((await indexLexical(db)) !== totalPassages + baselinePassages) throw new Error('expected every passage indexed');
    });
    const both = 1 / (1 / ours + 1 / lexical);
    console.log(`  ${'ingest + full-text indexing'.padEnd(34)} ${totalPassages.toString().padStart(7)} passages  ${(totalPassages / both).toFixed(2).padStart(7)} s  ${both.toFixed(0).padStart(7)} passages/s`);
    const again = await measure('re-ingest, unchanged (no-op)', db, totalPassages, async () => {
      const summary = await ingestDocuments(db, corpus, { ...DEFAULT_INGEST_OPTIONS, concurrency });
      if (summary.unchanged !== documents) throw new Error('expected every document unchanged');
    });
    console.log(
      `  ratio dhr ingest / baseline: ${(ours / base).toFixed(2)}x   (with full-text indexing: ${(both / base).toFixed(2)}x; re-ingest no-op: ${(again / base).toFixed(2)}x)`,
    );
  } finally {
    await cleanup();
  }
}

async function main() {
  await benchOne('PGlite (embedded, on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-bench-'));
    const db = await PgliteDatabase.open({ dataDir: dir });
    return { db, cleanup: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }); } };
  });
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.log('\nDATABASE_URL not set: skipping the PostgreSQL server run');
    return;
  }
  await benchOne(`PostgreSQL server`, async () => {
    const name = `dhr_bench_${process.pid}`;
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
