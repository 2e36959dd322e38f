/**
 * Loading the text corpus of bench/bm25-corpus.ts into a migrated store, shared by
 * `npm run bench:bm25` (BM25 alone) and `npm run bench:hybrid` (the same text with vectors).
 */
import type { Database } from '../src/store/db';
import { rebuildBm25 } from '../src/store/bm25-rebuild';
import { indexLexical } from '../src/store/lexical';
import { TextCorpus, type TextCorpusSpec } from './bm25-corpus';

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

export interface TextLoadOptions {
  /** triggers: the full-text step through migration 0007's triggers, as ingest does; rebuild: the set-based rebuild. */
  loadPath: 'triggers' | 'rebuild';
  /** Documents per INSERT of rows. */
  batchDocuments: number;
  /** Documents per full-text UPDATE (triggers path). */
  indexDocuments: number;
}

export interface TextLoadRecord {
  corpus: TextCorpusSpec;
  rowsSeconds: number;
  generatingSeconds: number;
  indexSeconds: number;
  vacuumAnalyzeSeconds: number;
  loadedAt: string;
  /** Absent in records of runs before BENCH_LOAD: the triggers. */
  loadPath?: 'triggers' | 'rebuild';
}

/** The load recorded by an earlier run, when it was for this very corpus and finished. */
export async function previousTextLoad(db: Database, spec: TextCorpusSpec): Promise<TextLoadRecord | undefined> {
  await db.exec('CREATE TABLE IF NOT EXISTS bench_bm25_load (record jsonb NOT NULL)');
  const [row] = await db.query<{ record: TextLoadRecord }>('SELECT record FROM bench_bm25_load');
  if (!row) return undefined;
  const same = (Object.keys(spec) as (keyof TextCorpusSpec)[]).every((k) => row.record.corpus[k] === spec[k]);
  return same ? row.record : undefined;
}

export async function loadText(db: Database, spec: TextCorpusSpec, options: TextLoadOptions): Promise<TextLoadRecord> {
  const { loadPath, batchDocuments, indexDocuments } = options;
  const { documents, passagesPerDocument: per } = spec;
  console.log(
    `loading: ${documents.toLocaleString()} documents, ${(documents * per).toLocaleString()} passages, vocabulary ${spec.vocabulary.toLocaleString()} (seed ${spec.seed})`,
  );
  const corpus = new TextCorpus(spec);

  // Rows first, without their tsvector (as ingest writes them); generating the next batch in JS
  // while the server inserts the previous one.
  let t = process.hrtime.bigint();
  let generating = 0;
  let pending: Promise<unknown> = Promise.resolve();
  for (let done = 0; done < documents; done += batchDocuments) {
    const g = process.hrtime.bigint();
    const b = corpus.nextDocuments(batchDocuments);
    const passageTitles = b.passageDocumentIds.map((d) => b.titles[d - b.firstDocumentId]);
    generating += seconds(g);
    await pending;
    pending = (async () => {
      await db.query(
        `INSERT INTO documents (id, key, title, abstract, summary, content_hash)
         SELECT i, k, t, a, s, md5(k) FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(i, k, t, a, s)`,
        [b.ids, b.keys, b.titles, b.abstracts, b.summaries],
      );
      await db.query(
        `INSERT INTO passages (id, document_id, ordinal, text, title_path, word_count)
         SELECT i, d, o, x, CASE WHEN st = '' THEN ARRAY[dt] ELSE ARRAY[dt, st] END, w
         FROM unnest($1::int[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[]) AS u(i, d, o, x, dt, st, w)`,
        [b.passageIds, b.passageDocumentIds, b.ordinals, b.texts, passageTitles, b.sectionTitles, b.wordCounts],
      );
    })();
    if ((done / batchDocuments) % 10 === 9) console.log(`    … ${(done + batchDocuments).toLocaleString()} documents (${seconds(t).toFixed(0)} s)`);
  }
  await pending;
  await db.query(`SELECT setval(pg_get_serial_sequence('documents', 'id'), $1), setval(pg_get_serial_sequence('passages', 'id'), $2)`, [
    documents,
    documents * per,
  ]);
  const rowsSeconds = seconds(t);
  console.log(
    `  documents + passages rows (unnest batches of ${batchDocuments} documents): ${rowsSeconds.toFixed(1).padStart(7)} s  (of which generating text in JS ${generating.toFixed(1)} s)`,
  );

  t = process.hrtime.bigint();
  if (loadPath === 'rebuild') {
    const r = await rebuildBm25(db);
    console.log(
      `  set-based rebuild (full-text step, postings, statistics, indexes; VACUUM ANALYZE of the postings): ${seconds(t).toFixed(1).padStart(7)} s  ${JSON.stringify(r)}`,
    );
  } else {
    // The full-text step, as the product runs it: the passages trigger writes postings and statistics.
    for (let first = 1; first <= documents; first += indexDocuments) {
      const ids = Array.from({ length: Math.min(indexDocuments, documents - first + 1) }, (_, i) => first + i);
      await indexLexical(db, ids);
      if (((first - 1) / indexDocuments) % 10 === 9)
        console.log(`    … ${(first + ids.length - 1).toLocaleString()} documents indexed (${seconds(t).toFixed(0)} s)`);
    }
    console.log(`  full-text step + BM25 triggers (indexLexical, ${indexDocuments} documents/UPDATE): ${seconds(t).toFixed(1).padStart(7)} s`);
  }
  const indexSeconds = seconds(t);

  t = process.hrtime.bigint();
  await db.exec('VACUUM ANALYZE');
  const vacuumAnalyzeSeconds = seconds(t);
  console.log(`  VACUUM ANALYZE: ${vacuumAnalyzeSeconds.toFixed(1).padStart(7)} s`);

  const record: TextLoadRecord = {
    corpus: spec,
    rowsSeconds,
    generatingSeconds: generating,
    indexSeconds,
    vacuumAnalyzeSeconds,
    loadedAt: new Date().toISOString(),
    loadPath,
  };
  await db.query('INSERT INTO bench_bm25_load (record) VALUES ($1::jsonb)', [JSON.stringify(record)]);
  return record;
}
