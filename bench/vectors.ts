/**
 * npm run bench:vectors — vectors into the store in binary rather than as text, both ways:
 * (1) what writing vectors costs, apart from encoding them: the embed step's three writers (document vectors with their summary pieces, passage vectors,
 * sentence vectors) as the product sends them (every vector of a batch in one binary `real[]`
 * parameter, src/store/vector.ts) against the text form they used before (`[x,y,…]` literals in a
 * text[] parameter, kept here as the baseline), in the same run, alternating, on the same rows.
 * Fresh stores (PGlite in memory; PostgreSQL too when DATABASE_URL is set), real schema: the HNSW
 * indexes of the model are maintained on insert, as when the server embeds.
 * (2) a question's statement on the store just written, through search() (HIERARCHICAL and the
 * default mode), with the question vector sent as text against the database's binary vectorParam,
 * alternating per question; rankings compared.
 *   BENCH_QUESTIONS (200)  BENCH_DOCUMENTS (100, 10 passages each)  BENCH_SENTENCES (2 a passage)  BENCH_BATCH (32)  BENCH_ROUNDS (3)
 */
import 'reflect-metadata';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { ingestDocuments } from '../src/pipeline/ingest';
import type { Database } from '../src/store/db';
import { registerModel, writeDocumentEmbeddings, writePassageEmbeddings, type EmbeddingModelRow } from '../src/store/embeddings';
import { modeDefaults, type RetrievalMode } from '../src/retrieval/modes';
import { search } from '../src/retrieval/search';
import type { SearchResult } from '../src/retrieval/types';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { writeSentenceEmbeddings } from '../src/store/sentence-embeddings';
import { vectorArrayLiteral, vectorLiteral } from '../src/store/vector';
import { prng } from '../test/helpers/prng';
import { openBenchDatabase } from './database';
import { passage } from './passages';

const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 100);
const SENTENCES = Number(process.env.BENCH_SENTENCES ?? 2);
const BATCH = Number(process.env.BENCH_BATCH ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 200);
const DIM = 512;

const random = prng(20261128);
const unit = (): Float32Array => {
  const v = Float32Array.from({ length: DIM }, () => random() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

interface Rows {
  documents: { documentId: number; contentHash: string; vector: Float32Array; pieces?: Float32Array[] }[];
  passages: { passageId: number; documentId: number; vector: Float32Array }[];
  sentences: { passageId: number; documentId: number; splitHash: string; vectors: Float32Array[] }[];
}

/** The writers before this change: the same statements with every vector as a text literal. */
const textWriters = {
  documents: (db: Database, model: EmbeddingModelRow, rows: Rows['documents']) =>
    db.query(
      `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding, summary_pieces)
       SELECT $1, u.document_id, u.content_hash, u.embedding::vector, u.pieces::vector[]
       FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS u(document_id, content_hash, embedding, pieces)
       JOIN documents d ON d.id = u.document_id AND d.content_hash = u.content_hash`,
      [
        model.id,
        rows.map((r) => r.documentId),
        rows.map((r) => r.contentHash),
        rows.map((r) => vectorLiteral(r.vector)),
        rows.map((r) => vectorArrayLiteral(r.pieces)),
      ],
    ),
  passages: (db: Database, model: EmbeddingModelRow, rows: Rows['passages']) =>
    db.query(
      `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, u.passage_id, p.document_id, u.embedding::vector
       FROM unnest($2::int[], $3::int[], $4::text[]) AS u(passage_id, document_id, embedding)
       JOIN passages p ON p.document_id = u.document_id AND p.id = u.passage_id`,
      [model.id, rows.map((r) => r.passageId), rows.map((r) => r.documentId), rows.map((r) => vectorLiteral(r.vector))],
    ),
  sentences: (db: Database, model: EmbeddingModelRow, rows: Rows['sentences']) =>
    db.query(
      `INSERT INTO sentence_embeddings (model_id, document_id, passage_id, split_hash, embeddings)
       SELECT $1, p.document_id, p.id, u.split_hash, u.embeddings::vector[]
       FROM unnest($2::int[], $3::int[], $4::text[], $5::text[]) AS u(passage_id, document_id, split_hash, embeddings)
       JOIN passages p ON p.document_id = u.document_id AND p.id = u.passage_id`,
      [
        model.id,
        rows.map((r) => r.passageId),
        rows.map((r) => r.documentId),
        rows.map((r) => r.splitHash),
        rows.map((r) => `{${r.vectors.map((v) => `"${vectorLiteral(v)}"`).join(',')}}`),
      ],
    ),
};

const binaryWriters = {
  documents: (db: Database, model: EmbeddingModelRow, rows: Rows['documents']) => writeDocumentEmbeddings(db, model, rows),
  passages: (db: Database, model: EmbeddingModelRow, rows: Rows['passages']) => writePassageEmbeddings(db, model, rows),
  sentences: (db: Database, model: EmbeddingModelRow, rows: Rows['sentences']) => writeSentenceEmbeddings(db, model, rows),
};

async function prepare(db: Database): Promise<{ model: EmbeddingModelRow; rows: Rows }> {
  await migrate(db);
  const docs = Array.from({ length: DOCUMENTS }, (_, d) => ({
    key: `d${d}`,
    title: `Document ${d}`,
    sections: Array.from({ length: 10 }, (_, s) => ({ title: `Section ${s}`, text: passage(d * 10 + s, 60) })),
  }));
  await ingestDocuments(db, docs, DEFAULT_INGEST_OPTIONS);
  const model = await registerModel(db, { name: 'bench-vectors', runtime: 'external', dimension: DIM, checksum: 'b'.repeat(64) } as never);
  const documents = await db.query<{ id: number; contentHash: string }>('SELECT id, content_hash AS "contentHash" FROM documents ORDER BY id');
  const passages = await db.query<{ id: number; documentId: number }>('SELECT id, document_id AS "documentId" FROM passages ORDER BY id');
  return {
    model,
    rows: {
      documents: documents.map((d, i) => ({
        documentId: d.id,
        contentHash: d.contentHash,
        vector: unit(),
        pieces: i % 3 === 0 ? [unit(), unit()] : undefined,
      })),
      passages: passages.map((p) => ({ passageId: p.id, documentId: p.documentId, vector: unit() })),
      sentences: passages.map((p, i) => ({ passageId: p.id, documentId: p.documentId, splitHash: `s${i}`, vectors: Array.from({ length: SENTENCES }, unit) })),
    },
  };
}

async function timeWrites(db: Database, model: EmbeddingModelRow, rows: Rows, writers: typeof binaryWriters): Promise<Record<keyof Rows, number>> {
  await db.query('DELETE FROM sentence_embeddings');
  await db.query('DELETE FROM passage_embeddings');
  await db.query('DELETE FROM document_embeddings');
  const out = {} as Record<keyof Rows, number>;
  for (const level of ['documents', 'passages', 'sentences'] as const) {
    const list = rows[level] as never[];
    const t0 = performance.now();
    for (let i = 0; i < list.length; i += BATCH)
      await (writers[level] as (db: Database, m: EmbeddingModelRow, r: never[]) => Promise<unknown>)(db, model, list.slice(i, i + BATCH));
    out[level] = performance.now() - t0;
  }
  return out;
}

async function run(label: string, db: Database) {
  const { model, rows } = await prepare(db);
  const vectors = { documents: (rows.documents.length * 5) / 3, passages: rows.passages.length, sentences: rows.passages.length * SENTENCES };
  const best = { text: {} as Record<keyof Rows, number>, binary: {} as Record<keyof Rows, number> };
  for (let round = 0; round < ROUNDS; round++) {
    // alternate which goes first, so neither always meets a warmer cache
    const order = round % 2 === 0 ? (['text', 'binary'] as const) : (['binary', 'text'] as const);
    for (const form of order) {
      const t = await timeWrites(db, model, rows, form === 'text' ? (textWriters as never) : binaryWriters);
      for (const level of Object.keys(t) as (keyof Rows)[]) best[form][level] = Math.min(best[form][level] ?? Infinity, t[level]);
    }
  }
  console.log(
    `\n${label}: ${rows.documents.length} documents (a third with 2 summary pieces), ${rows.passages.length} passages, ${SENTENCES} sentence vectors a passage; batches of ${BATCH}; best of ${ROUNDS}`,
  );
  console.log('| writer | vectors | text form, ms | binary real[], ms | binary ÷ text | binary, vectors/s |');
  console.log('|---|---:|---:|---:|---:|---:|');
  let text = 0;
  let binary = 0;
  for (const level of ['documents', 'passages', 'sentences'] as const) {
    text += best.text[level];
    binary += best.binary[level];
    console.log(
      `| ${level} | ${Math.round(vectors[level])} | ${best.text[level].toFixed(0)} | ${best.binary[level].toFixed(0)} | ${(best.binary[level] / best.text[level]).toFixed(2)}× | ${Math.round((vectors[level] * 1000) / best.binary[level])} |`,
    );
  }
  console.log(`| all three | | ${text.toFixed(0)} | ${binary.toFixed(0)} | ${(binary / text).toFixed(2)}× | |`);
  await questions(db, model);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** (2): the same searches with the question vector as text (no vectorParam: search() sends vectorLiteral) and as the database sends it. */
async function questions(db: Database, model: EmbeddingModelRow) {
  // search() reads db.vectorParam; without it the question vector goes as pgvector's text form
  const asText = { distributed: db.distributed, queryWithSettings: db.queryWithSettings.bind(db) } as unknown as Database;
  const ref = { id: model.id, dimension: model.dimension };
  const modes: RetrievalMode[] = ['HIERARCHICAL', 'HYBRID_HIERARCHICAL'];
  const times: Record<string, number[]> = {};
  let differ = 0;
  for (let q = 0; q < QUESTIONS + 5; q++) {
    const v = unit();
    for (const mode of modes) {
      const s = {
        ...modeDefaults(mode),
        mode,
        documentModel: ref,
        passageModel: ref,
        questionForDocuments: v,
        questionForPassages: v,
        questionText: passage(5000 + q, 8),
        k1: 10,
        k2: 10,
      };
      const got: SearchResult[] = [];
      for (const [form, target] of (q % 2 === 0
        ? [
            ['text', asText],
            ['binary', db],
          ]
        : [
            ['binary', db],
            ['text', asText],
          ]) as [string, Database][]) {
        const t0 = performance.now();
        got.push(await search(target, s));
        if (q >= 5) (times[`${mode}, ${form}`] ??= []).push(performance.now() - t0);
      }
      if (JSON.stringify(got[0].passages) !== JSON.stringify(got[1].passages)) differ++;
    }
  }
  console.log(`\nquestions: ${QUESTIONS}, k1 = k2 = 10, a random question vector and 8 words each; both forms per question, alternating which goes first`);
  console.log('| mode | text, p50 ms | binary, p50 ms | binary − text |');
  console.log('|---|---:|---:|---:|');
  for (const mode of modes) {
    const a = median(times[`${mode}, text`]);
    const b = median(times[`${mode}, binary`]);
    console.log(`| ${mode} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b - a).toFixed(2)} ms |`);
  }
  console.log(`rankings that differ between the two forms: ${differ} of ${QUESTIONS * modes.length + 10}`);
}

async function main() {
  const pglite = await PgliteDatabase.open({});
  try {
    await run('PGlite (in memory)', pglite);
  } finally {
    await pglite.close();
  }
  if (process.env.DATABASE_URL) {
    const pg = await openBenchDatabase(process.env.DATABASE_URL, 'dhr_bench_vectors', true);
    try {
      await run('PostgreSQL', pg);
    } finally {
      await pg.close();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
