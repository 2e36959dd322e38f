import { join, resolve } from 'node:path';
import { DEFAULT_MODEL, type EncoderSpec } from './encoders/spec';
import { DEFAULT_MAX_METADATA_DEPTH, DEFAULT_MAX_SECTION_DEPTH } from './ingest/depth';
import { DEFAULT_INGEST_OPTIONS, type IngestOptions } from './ingest/types';
import { LOG_LEVELS, type LogLevel } from './observability/logger';
import { DEFAULT_BM25, DEFAULT_EF_FACTOR, DEFAULT_MAX_SCAN_TUPLES, ITERATIVE_SCANS, type Bm25Settings, type IterativeScan } from './retrieval/types';

/** Settings from the environment; every one has a default so the embedded demo needs none. */
export interface Config {
  /** PostgreSQL server URL; absent → embedded PGlite in dataDir. */
  databaseUrl?: string;
  /** DHR_DISTRIBUTED=citus: DATABASE_URL is a Citus coordinator (docs/scale-out.md). */
  distributed?: 'citus';
  dataDir: string;
  port: number;
  host: string;
  ingest: IngestOptions & { maxSectionDepth: number; maxMetadataDepth: number };
  /** Where registerEmbeddingModel (GraphQL) finds model folders; real paths must stay inside it. */
  modelsDir: string;
  /** Most documents one ingestDocuments mutation may carry. */
  maxIngestBatch: number;
  /** Largest page a connection returns. */
  maxPageSize: number;
  /** Model per DHR role: "use-lite" (default) or a custom ONNX model folder. */
  encoders: EncoderSpec;
  /** Where converted models are cached (never in git). */
  modelCacheDir?: string;
  /** onnxruntime intra-op threads; 0 = all cores. */
  encoderThreads: number;
  /** Rows read, encoded and written per step when embedding the corpus (the encoder picks its own forward batch). */
  embedBatchSize: number;
  /** Embed new and changed documents as part of ingest. */
  embedOnIngest: boolean;
  /** Job workers the server runs in-process (0: only `dhr worker` processes work jobs). */
  jobWorkers: number;
  /** Documents or passages per job batch: what a crash can lose, and how long a batch holds its lock. */
  jobBatchSize: number;
  /** How often an idle worker looks for work. */
  jobPollMs: number;
  /** HNSW ef_search for retrieval: at least this (raised per query by efFactor). */
  efSearch: number;
  /** HNSW ef_search per row an ANN stage returns (stage 1: k1 documents). */
  efFactor: number;
  /** How filtered HNSW scans go on until enough rows pass (pgvector iterative scans). */
  iterativeScan: IterativeScan;
  /** The most tuples one iterative HNSW scan visits. */
  maxScanTuples: number;
  /** Okapi BM25's k1 and b, the summary's weight in document BM25F, postings read per question term. */
  bm25: Bm25Settings;
  /** Weight of the dense score in the hybrid modes when a question gives none (unset: each mode's tuned default). */
  alpha?: number;
  /** public: queries need no key; key: every operation needs a valid key (reader or admin). */
  readAccess: ReadAccess;
  /** Deepest field nesting an operation may have (introspection fields not counted). */
  maxQueryDepth: number;
  /** Largest static cost estimate of an operation (fields × list sizes; docs/operations.md). */
  maxQueryCost: number;
  /** Largest HTTP request body; larger bodies get 413 before any parsing. */
  maxBodyBytes: number;
  /** Most lexical tokens in a query document (graphql-js refuses more while parsing). */
  maxQueryTokens: number;
  /** Most aliases in an operation, fragments expanded (QUERY_TOO_COSTLY). */
  maxAliases: number;
  /** Most directives in an operation (QUERY_TOO_COSTLY). */
  maxDirectives: number;
  /** Most selections the cost estimate visits, fragments expanded (QUERY_TOO_COSTLY). */
  maxQueryNodes: number;
  /** Longest string argument of a query (ingested documents excepted), in characters (BAD_USER_INPUT). */
  maxArgumentLength: number;
  /** PostgreSQL statement_timeout of every connection, ms (0: none). */
  statementTimeoutMs: number;
  /** Longest an HTTP request may take before it is answered 503 TIMEOUT, ms (0: none). */
  requestTimeoutMs: number;
  /** Longest opening a PostgreSQL connection may take, ms. */
  dbConnectTimeoutMs: number;
  /** Queries per API key (or client address without a key) per window; 0: unlimited. */
  rateLimitQueries: number;
  /** Mutations per API key (or client address) per window; 0: unlimited. */
  rateLimitMutations: number;
  rateLimitWindowS: number;
  // --- observability and shutdown (docs/operations.md#observability)
  /** pino level of the server's JSON log. */
  logLevel: LogLevel;
  /** Who may read /metrics: public, or key (a reader or admin key). Default: as READ_ACCESS. */
  metricsAccess: ReadAccess;
  /** On SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are cut. */
  shutdownGraceMs: number;
}

export type ReadAccess = 'public' | 'key';

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    distributed: env.DHR_DISTRIBUTED ? choiceSetting(env, 'DHR_DISTRIBUTED', ['citus'] as const, 'citus') : undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    port: intSetting(env, 'PORT', 4000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    ingest: {
      maxWords: intSetting(env, 'MAX_WORDS', DEFAULT_INGEST_OPTIONS.maxWords, 1, 10_000),
      maxDocumentBytes: intSetting(env, 'MAX_DOCUMENT_BYTES', DEFAULT_INGEST_OPTIONS.maxDocumentBytes, 1, 1 << 30),
      // ops-input: nesting bounds (ingest and GraphQL input checks)
      maxSectionDepth: intSetting(env, 'MAX_SECTION_DEPTH', DEFAULT_MAX_SECTION_DEPTH, 1, 1000),
      maxMetadataDepth: intSetting(env, 'MAX_METADATA_DEPTH', DEFAULT_MAX_METADATA_DEPTH, 1, 1000),
    },
    // ops-input: the only folder registerEmbeddingModel (GraphQL) may load models from
    modelsDir: resolve(env.MODELS_DIR || join(env.DATA_DIR || './data', 'models')),
    maxIngestBatch: intSetting(env, 'MAX_INGEST_BATCH', 1000, 1, 100_000),
    maxPageSize: intSetting(env, 'MAX_PAGE_SIZE', 100, 1, 10_000),
    encoders: encoderSpec(env),
    modelCacheDir: env.MODEL_CACHE_DIR || undefined,
    encoderThreads: intSetting(env, 'ENCODER_THREADS', 0, 0, 256),
    embedBatchSize: intSetting(env, 'EMBED_BATCH_SIZE', 64, 1, 4096),
    embedOnIngest: boolSetting(env, 'EMBED_ON_INGEST', true),
    efSearch: intSetting(env, 'HNSW_EF_SEARCH', 100, 1, 1000),
    efFactor: numberSetting(env, 'HNSW_EF_FACTOR', DEFAULT_EF_FACTOR, 1, 100),
    iterativeScan: choiceSetting(env, 'HNSW_ITERATIVE_SCAN', ITERATIVE_SCANS, 'strict_order'),
    maxScanTuples: intSetting(env, 'HNSW_MAX_SCAN_TUPLES', DEFAULT_MAX_SCAN_TUPLES, 1, 2_147_483_647),
    bm25: {
      k1: numberSetting(env, 'BM25_K1', DEFAULT_BM25.k1, 0, 10),
      b: numberSetting(env, 'BM25_B', DEFAULT_BM25.b, 0, 1),
      summaryWeight: numberSetting(env, 'BM25_SUMMARY_WEIGHT', DEFAULT_BM25.summaryWeight, 0, 100),
      termCap: intSetting(env, 'BM25_TERM_CAP', DEFAULT_BM25.termCap, 1, 100_000_000),
    },
    alpha: env.HYBRID_ALPHA ? numberSetting(env, 'HYBRID_ALPHA', 0, 0, 1) : undefined,
    jobWorkers: intSetting(env, 'JOB_WORKERS', 1, 0, 64),
    jobBatchSize: intSetting(env, 'JOB_BATCH_SIZE', 32, 1, 4096),
    jobPollMs: intSetting(env, 'JOB_POLL_MS', 1000, 10, 600_000),
    readAccess: choiceSetting(env, 'READ_ACCESS', ['public', 'key'] as const, 'public'),
    maxQueryDepth: intSetting(env, 'MAX_QUERY_DEPTH', 12, 1, 1000),
    maxQueryCost: intSetting(env, 'MAX_QUERY_COST', 500_000, 1, 1_000_000_000),
    // Room for one document of MAX_DOCUMENT_BYTES (2 MB) with its JSON escaping.
    maxBodyBytes: intSetting(env, 'MAX_BODY_BYTES', 4 << 20, 1024, 1 << 30),
    maxQueryTokens: intSetting(env, 'MAX_QUERY_TOKENS', 5000, 10, 10_000_000),
    maxAliases: intSetting(env, 'MAX_ALIASES', 30, 0, 100_000),
    maxDirectives: intSetting(env, 'MAX_DIRECTIVES', 50, 0, 100_000),
    maxQueryNodes: intSetting(env, 'MAX_QUERY_NODES', 10_000, 10, 10_000_000),
    maxArgumentLength: intSetting(env, 'MAX_ARGUMENT_LENGTH', 4096, 16, 1 << 30),
    statementTimeoutMs: intSetting(env, 'STATEMENT_TIMEOUT_MS', 30_000, 0, 2_147_483_647),
    requestTimeoutMs: intSetting(env, 'REQUEST_TIMEOUT_MS', 60_000, 0, 2_147_483_647),
    dbConnectTimeoutMs: intSetting(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    rateLimitQueries: intSetting(env, 'RATE_LIMIT_QUERIES', 1200, 0, 1_000_000_000),
    rateLimitMutations: intSetting(env, 'RATE_LIMIT_MUTATIONS', 120, 0, 1_000_000_000),
    rateLimitWindowS: intSetting(env, 'RATE_LIMIT_WINDOW_S', 60, 1, 86_400),
    // --- observability and shutdown
    logLevel: choiceSetting(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsAccess: choiceSetting(env, 'METRICS_ACCESS', ['public', 'key'] as const, choiceSetting(env, 'READ_ACCESS', ['public', 'key'] as const, 'public')),
    shutdownGraceMs: intSetting(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
  };
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  return numberSetting(env, name, fallback, min, max, 'an integer');
}

function numberSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  kind: 'a number' | 'an integer' = 'a number',
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  const valid = kind === 'an integer' ? Number.isInteger(value) : Number.isFinite(value);
  if (!valid || value < min || value > max) {
    throw new ConfigError(`${name} must be ${kind} from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** ENCODER names the model for every role; ENCODER_<ROLE> overrides one role. */
function encoderSpec(env: NodeJS.ProcessEnv): EncoderSpec {
  const all = env.ENCODER || DEFAULT_MODEL;
  return {
    questionDocument: env.ENCODER_QUESTION_DOCUMENT || all,
    document: env.ENCODER_DOCUMENT || all,
    questionPassage: env.ENCODER_QUESTION_PASSAGE || all,
    passage: env.ENCODER_PASSAGE || all,
  };
}

function boolSetting(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function choiceSetting<T extends string>(env: NodeJS.ProcessEnv, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if ((choices as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${raw}"`);
}
