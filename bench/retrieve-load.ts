/**
 * Loading the synthetic corpus of bench/retrieve-corpus.ts into a migrated store, and what the
 * retrieval benches share about it: `npm run bench:retrieve` (one server) and `npm run bench:citus`
 * (the same corpus on a Citus coordinator, by shard count) load and measure it the same way.
 */
import type { SearchResult } from '../src/retrieval/types';
import type { Database } from '../src/store/db';
import type { EmbeddingModelRow } from '../src/store/embeddings';
import { syntheticModel } from '../test/helpers/synthetic-model';
import { binaryVectorArray, Corpus, questionTargets, questionVectors, type CorpusSpec } from './retrieve-corpus';

export const HNSW_BUILD = { m: 16, efConstruction: 64 }; // as registerModel builds them (src/store/embeddings.ts)

export const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
export const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/** The share of b's top-k passages that a's top-k holds. */
export function overlap(a: SearchResult, b: SearchResult, k: number): number {
  const truth = new Set(b.passages.slice(0, k).map((p) => p.passageId));
  if (truth.size === 0) return 1;
  return a.passages.slice(0, k).filter((p) => truth.has(p.passageId)).length / truth.size;
}

export const modelName = (spec: CorpusSpec) => `bench-synthetic-${spec.dimension}`;

/** The registry entry of the synthetic vectors (inserted directly, never encoded). */
export const syntheticEncoder = (spec: CorpusSpec) => syntheticModel(modelName(spec), spec.dimension);

export interface LoadRecord {
  corpus: CorpusSpec;
  loadSeconds: number;
  documentIndexSeconds: number;
  /** 0 when the load built no passage index (LoadOptions.passageIndex false). */
  passageIndexSeconds: number;
  analyzeSeconds: number;
  loadedAt: string;
}

export interface LoadOptions {
  /** Rows per INSERT of vectors. */
  batchRows: number;
  /** max_parallel_maintenance_workers for the HNSW builds. */
  buildWorkers: number;
  /** maintenance_work_mem for the HNSW builds ("4GB"). */
  buildMemory: string;
  /** Build the passage HNSW index too (FLAT and PARALLEL need it; HIERARCHICAL does not). */
  passageIndex: boolean;
  /** false: the documents and passages rows exist already (bench:hybrid's text corpus, same ids); only vectors are loaded. */
  rows?: boolean;
  /**
   * A Citus coordinator: the build settings are sent to the shards (citus.propagate_set_commands),
   * and ANALYZE names the distributed tables (a bare ANALYZE stays on the coordinator).
   */
  citus?: boolean;
}

const ANALYZED_TABLES = 'documents, passages, document_embeddings, passage_embeddings';

export async function buildHnsw(
  db: Database,
  table: string,
  modelId: number,
  spec: CorpusSpec,
  options: Pick<LoadOptions, 'buildWorkers' | 'buildMemory' | 'citus'>,
): Promise<number> {
  const start = process.hrtime.bigint();
  await db.transaction(async (tx) => {
    if (options.citus) await tx.query(`SET LOCAL citus.propagate_set_commands = 'local'`);
    await tx.query(`SET LOCAL maintenance_work_mem = '${options.buildMemory}'`);
    await tx.query(`SET LOCAL max_parallel_maintenance_workers = ${options.buildWorkers}`);
    await tx.query(
      `CREATE INDEX IF NOT EXISTS ${table.replace(/^.*\./, '')}_hnsw_m${modelId} ON ${table}
       USING hnsw ((embedding::vector(${spec.dimension})) vector_ip_ops) WITH (m = ${HNSW_BUILD.m}, ef_construction = ${HNSW_BUILD.efConstruction})
       WHERE model_id = ${modelId}`,
    );
  });
  return seconds(start);
}

/** The load recorded by an earlier run, when it was for this very corpus and finished. */
export async function previousLoad(db: Database, spec: CorpusSpec): Promise<{ model: EmbeddingModelRow; record: LoadRecord } | undefined> {
  const [row] = await db.query<EmbeddingModelRow>('SELECT id, name, runtime, dimension, checksum, settings FROM embedding_models WHERE name = $1', [
    modelName(spec),
  ]);
  const record = row?.settings?.bench as LoadRecord | undefined;
  if (!row || !record) return undefined;
  const same = (Object.keys(spec) as (keyof CorpusSpec)[]).every((k) => k === 'questions' || record.corpus[k] === spec[k]);
  return same ? { model: row, record } : undefined;
}

export async function load(db: Database, spec: CorpusSpec, options: LoadOptions): Promise<{ model: EmbeddingModelRow; record: LoadRecord }> {
  const { documents, passagesPerDocument: per, dimension: dim } = spec;
  const { batchRows } = options;
  const passages = documents * per;
  const name = modelName(spec);
  console.log(`loading: ${documents.toLocaleString()} documents, ${passages.toLocaleString()} passages, ${dim}-d (seed ${spec.seed})`);
  const loadStart = process.hrtime.bigint();

  let t = process.hrtime.bigint();
  if (options.rows !== false) {
    await db.query(
      `INSERT INTO documents (id, key, title, summary, content_hash)
       SELECT g, 'bench/' || g, 'Document ' || g, '', md5(g::text) FROM generate_series(1, $1::int) g`,
      [documents],
    );
    for (let first = 1; first <= passages; first += 250_000) {
      await db.query(
        `INSERT INTO passages (id, document_id, ordinal, text, title_path, word_count)
         SELECT g, (g - 1) / $3::int + 1, (g - 1) % $3::int, '', '{}', 1 FROM generate_series($1::int, $2::int) g`,
        [first, Math.min(passages, first + 249_999), per],
      );
    }
    await db.query(`SELECT setval(pg_get_serial_sequence('documents', 'id'), $1), setval(pg_get_serial_sequence('passages', 'id'), $2)`, [documents, passages]);
    console.log(`  documents + passages rows (generate_series):     ${seconds(t).toFixed(1).padStart(7)} s`);
  }

  // The model row without its indexes: they are built after the load (registerModel then finds them).
  const [{ id }] = await db.query<{ id: number }>(
    `INSERT INTO embedding_models (name, runtime, dimension, checksum, settings) VALUES ($1, $2, $3, $4, '{}'::jsonb) RETURNING id`,
    [name, 'onnxruntime-node', dim, name.padEnd(64, '0')],
  );
  const [{ oid }] = await db.query<{ oid: number }>(`SELECT 'vector'::regtype::oid AS oid`);

  t = process.hrtime.bigint();
  let generating = 0;
  const corpus = new Corpus(spec);
  for (let first = 0; first < documents; first += batchRows) {
    const n = Math.min(batchRows, documents - first);
    const buf = binaryVectorArray(oid, corpus.documentVectors.subarray(first * dim, (first + n) * dim), n, dim);
    await db.query(
      `INSERT INTO document_embeddings (model_id, document_id, content_hash, embedding)
       SELECT $1, $2::int + o::int - 1, md5(($2::int + o::int - 1)::text), v FROM unnest($3::vector[]) WITH ORDINALITY AS u(v, o)`,
      [id, first + 1, buf],
    );
  }
  console.log(`  document embeddings (binary vector[] batches):  ${seconds(t).toFixed(1).padStart(7)} s`);

  t = process.hrtime.bigint();
  // Generate the next batch while the server inserts the previous one.
  let pending: Promise<unknown> = Promise.resolve();
  const docsPerBatch = Math.max(1, Math.floor(batchRows / per));
  for (let done = 0; done < documents; done += docsPerBatch) {
    const g = process.hrtime.bigint();
    const batch = corpus.nextPassages(docsPerBatch);
    const buf = binaryVectorArray(oid, batch.vectors, batch.rows, dim);
    generating += seconds(g);
    await pending;
    pending = db.query(
      `INSERT INTO passage_embeddings (model_id, passage_id, document_id, embedding)
       SELECT $1, $2::int + o::int - 1, ($2::int + o::int - 2) / $3::int + 1, v FROM unnest($4::vector[]) WITH ORDINALITY AS u(v, o)`,
      [id, batch.firstPassageId, per, buf],
    );
    if ((done / docsPerBatch) % 25 === 24) process.stdout.write(`    … ${((done + docsPerBatch) * per).toLocaleString()} passages\n`);
  }
  await pending;
  console.log(
    `  passage embeddings (binary vector[] batches):   ${seconds(t).toFixed(1).padStart(7)} s  (of which generating vectors in JS ${generating.toFixed(1)} s)`,
  );
  const loadSeconds = seconds(loadStart);

  // HNSW after the load, the same DDL as registerModel's ensureIndexes, with build memory for the graph.
  const buildIndex = (table: string) => buildHnsw(db, table, id, spec, options);
  const documentIndexSeconds = await buildIndex('document_embeddings');
  console.log(`  HNSW build, document_embeddings (${documents.toLocaleString()}):      ${documentIndexSeconds.toFixed(1).padStart(7)} s`);
  let passageIndexSeconds = 0;
  if (options.passageIndex) {
    passageIndexSeconds = await buildIndex('passage_embeddings');
    console.log(`  HNSW build, passage_embeddings (${passages.toLocaleString()}):     ${passageIndexSeconds.toFixed(1).padStart(7)} s`);
  }

  t = process.hrtime.bigint();
  await db.exec(options.citus ? `ANALYZE ${ANALYZED_TABLES}` : 'ANALYZE');
  const analyzeSeconds = seconds(t);
  console.log(`  ANALYZE:                                        ${analyzeSeconds.toFixed(1).padStart(7)} s`);

  const record: LoadRecord = { corpus: spec, loadSeconds, documentIndexSeconds, passageIndexSeconds, analyzeSeconds, loadedAt: new Date().toISOString() };
  await db.query(`UPDATE embedding_models SET settings = jsonb_build_object('bench', $2::jsonb) WHERE id = $1`, [id, JSON.stringify(record)]);
  const [model] = await db.query<EmbeddingModelRow>('SELECT id, name, runtime, dimension, checksum, settings FROM embedding_models WHERE id = $1', [id]);
  return { model, record };
}

/** Question vectors near random passages (their stored vectors), and those passages' ids. */
export async function benchQuestions(db: Database, spec: CorpusSpec, modelId: number): Promise<{ targets: number[]; questions: Float32Array[] }> {
  const targets = questionTargets(spec);
  const rows = await db.query<{ passage_id: number; v: string }>(
    `SELECT passage_id, embedding::text AS v FROM passage_embeddings WHERE model_id = $1 AND passage_id = ANY($2::int[])`,
    [modelId, targets],
  );
  const byId = new Map(rows.map((r) => [r.passage_id, Float32Array.from(JSON.parse(r.v) as number[])]));
  return {
    targets,
    questions: questionVectors(
      spec,
      targets.map((t) => byId.get(t)!),
    ),
  };
}
