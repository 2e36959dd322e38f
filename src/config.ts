import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import type { QuestionQueueOptions } from './encoders/questions';
import type { EncoderSpec } from './encoders/spec';
import type { IngestOptions } from './ingest/types';
import type { LogFormat, LogLevel } from './observability/logger';
import type { RankingLayer } from './retrieval/parameters';
import type { Bm25Settings, IterativeScan } from './retrieval/types';
import { type READ_ACCESSES, settingOf } from './config/variables';

/** Settings from the environment; every one has a default so the embedded demo needs none. */
export interface Config {
  /** PostgreSQL server URL; absent → embedded PGlite in dataDir. */
  databaseUrl?: string;
  /** Streaming replicas of databaseUrl that serve read-only queries (docs/scale-out.md#read-replicas); empty: none. */
  readUrls: string[];
  /** A replica whose replay is further behind the primary than this is skipped, ms. */
  replicaMaxLagMs: number;
  /** How often each replica's replay position (and the primary's WAL position) is checked, ms. */
  replicaCheckMs: number;
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
  /** ingestDocuments over this many documents, or this many bytes of their JSON, becomes an ingest job. */
  ingestJob: { fromDocuments: number; fromBytes: number; batchDocuments: number; batchBytes: number };
  /** Largest page a connection returns. */
  maxPageSize: number;
  /** Model per DHR role: "use-lite" (default) or a custom ONNX model folder. */
  encoders: EncoderSpec;
  /** Where converted models are cached (never in git). */
  modelCacheDir?: string;
  /** onnxruntime intra-op threads for corpus embedding (ingest, jobs); 0 = all cores. */
  encoderThreads: number;
  /** onnxruntime intra-op threads for questions (0 = all cores). */
  encoderQueryThreads: number;
  /** Question encoding: most per model run, most waiting (then OVERLOADED), vectors cached per model. */
  questionQueue: QuestionQueueOptions;
  /** PostgreSQL connections in the API's pool (default from the machine: defaultPoolSize). */
  dbPoolMax: number;
  /** Search statements kept prepared per pooled connection (DB_PREPARED_STATEMENTS; 0: none, for PgBouncer's transaction mode before 1.21). */
  dbPreparedStatements: number;
  /** PGLITE_BM25_INDEX: a new PGlite store gets pg_textsearch's BM25 index (store/pglite.ts). */
  pgliteBm25Index: boolean;
  /** Pooled connections one GraphQL operation may hold at once (DB_CONNECTIONS_PER_REQUEST). */
  dbConnectionsPerRequest: number;
  /** Rows read, encoded and written per step when embedding the corpus (the encoder picks its own forward batch). */
  embedBatchSize: number;
  /** A bulk ingest of this many passages or more into a store without postings indexes them once at its end (0: never; store/deferred-indexes.ts). */
  bulkDeferIndexesFrom: number;
  /** Embed new and changed documents as part of ingest. */
  embedOnIngest: boolean;
  /** Job workers the server runs in-process (0: only `dhr worker` processes work jobs). */
  jobWorkers: number;
  /** Documents or passages per job batch: what a crash can lose, and how long a batch holds its lock. */
  jobBatchSize: number;
  /** How often an idle worker looks for work. */
  jobPollMs: number;
  /** Finished jobs (ingest, embedding, tune runs) older than this are deleted by the job workers, days (0: kept). */
  jobRetentionDays: number;
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
  /**
   * Ranking parameters for what a question and the corpus's settings leave out (resolveRanking):
   * HYBRID_ALPHA (the hybrid modes' alpha, both stages) and PER_DOCUMENT (a bound on passages of
   * one document; where questions ask for a page, as the Python docs' do, 1 lifted dev doc@20
   * 57.1 → 69.0; where the answer may be any passage of a page, as the Factbook's, it costs: docs/eval).
   */
  ranking: RankingLayer;
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
  /** Retrievals one operation may start (MAX_RETRIEVES). */
  maxRetrieves: number;
  /** Σ k1 × k2 over an operation's retrievals (MAX_RETRIEVAL_WORK). */
  maxRetrievalWork: number;
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
  /** Most HTTP requests in flight; more are refused 503 OVERLOADED before their body is read (0: no bound). */
  maxInFlight: number;
  /** Longest opening a PostgreSQL connection may take, ms. */
  dbConnectTimeoutMs: number;
  /** Queries per API key (or client address without a key) per window; 0: unlimited. */
  rateLimitQueries: number;
  /** Mutations per API key (or client address) per window; 0: unlimited. */
  rateLimitMutations: number;
  rateLimitWindowS: number;
  /** Failed authentications (unknown, revoked or malformed keys) per client address per window; 0: unlimited. */
  rateLimitAuthFailures: number;
  // --- observability and shutdown (docs/operations.md#observability)
  /** pino level of the server's log. */
  logLevel: LogLevel;
  /** LOG_FORMAT: json, pretty (a line a person reads), or auto: pretty on a terminal, else json; json under NODE_ENV=production unless LOG_FORMAT says otherwise. */
  logFormat: LogFormat;
  /** Who may read /metrics: public, or key (a reader or admin key). Default: as READ_ACCESS. */
  metricsAccess: ReadAccess;
  /** MCP_ENABLED: `dhr serve` answers the Model Context Protocol at /mcp (Streamable HTTP; the same keys and roles as GraphQL). */
  mcpEnabled: boolean;
  /** On SIGTERM/SIGINT, how long in-flight requests may take to finish before their connections are cut. */
  shutdownGraceMs: number;
}

export type ReadAccess = (typeof READ_ACCESSES)[number];

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dbPoolMax = intSetting(env, 'DB_POOL_MAX', defaultPoolSize(availableParallelism()));
  const questionQueue: QuestionQueueOptions = {
    maxBatch: intSetting(env, 'QUESTION_BATCH'),
    maxWaiting: intSetting(env, 'QUESTION_QUEUE'),
    cacheEntries: intSetting(env, 'QUESTION_CACHE'),
  };
  return {
    databaseUrl: databaseUrlSetting(env),
    readUrls: readUrls(env),
    replicaMaxLagMs: intSetting(env, 'REPLICA_MAX_LAG_MS'),
    replicaCheckMs: intSetting(env, 'REPLICA_CHECK_MS'),
    distributed: env.DHR_DISTRIBUTED ? choiceSetting<'citus'>(env, 'DHR_DISTRIBUTED') : undefined,
    dataDir: resolve(textSetting(env, 'DATA_DIR')),
    port: intSetting(env, 'PORT'),
    host: textSetting(env, 'HOST'),
    ingest: {
      maxWords: intSetting(env, 'MAX_WORDS'),
      maxDocumentBytes: intSetting(env, 'MAX_DOCUMENT_BYTES'),
      // ops-input: nesting bounds (ingest and GraphQL input checks)
      maxSectionDepth: intSetting(env, 'MAX_SECTION_DEPTH'),
      maxMetadataDepth: intSetting(env, 'MAX_METADATA_DEPTH'),
    },
    // ops-input: the only folder registerEmbeddingModel (GraphQL) may load models from
    modelsDir: resolve(env.MODELS_DIR || join(textSetting(env, 'DATA_DIR'), 'models')),
    maxIngestBatch: intSetting(env, 'MAX_INGEST_BATCH'),
    ingestJob: {
      fromDocuments: intSetting(env, 'INGEST_JOB_DOCUMENTS'),
      fromBytes: intSetting(env, 'INGEST_JOB_BYTES'),
      batchDocuments: intSetting(env, 'INGEST_JOB_BATCH_DOCUMENTS'),
      batchBytes: intSetting(env, 'INGEST_JOB_BATCH_BYTES'),
    },
    maxPageSize: intSetting(env, 'MAX_PAGE_SIZE'),
    encoders: encoderSpec(env),
    modelCacheDir: env.MODEL_CACHE_DIR || undefined,
    encoderThreads: intSetting(env, 'ENCODER_THREADS'),
    encoderQueryThreads: intSetting(env, 'ENCODER_QUERY_THREADS'),
    questionQueue,
    dbPoolMax,
    dbPreparedStatements: intSetting(env, 'DB_PREPARED_STATEMENTS'),
    pgliteBm25Index: boolSetting(env, 'PGLITE_BM25_INDEX'),
    dbConnectionsPerRequest: intSetting(env, 'DB_CONNECTIONS_PER_REQUEST', defaultConnectionShare(dbPoolMax)),
    embedBatchSize: intSetting(env, 'EMBED_BATCH_SIZE'),
    bulkDeferIndexesFrom: intSetting(env, 'BULK_DEFER_INDEXES_PASSAGES'),
    embedOnIngest: boolSetting(env, 'EMBED_ON_INGEST'),
    efSearch: intSetting(env, 'HNSW_EF_SEARCH'),
    efFactor: numberSetting(env, 'HNSW_EF_FACTOR'),
    iterativeScan: choiceSetting<IterativeScan>(env, 'HNSW_ITERATIVE_SCAN'),
    maxScanTuples: intSetting(env, 'HNSW_MAX_SCAN_TUPLES'),
    bm25: {
      k1: numberSetting(env, 'BM25_K1'),
      b: numberSetting(env, 'BM25_B'),
      summaryWeight: numberSetting(env, 'BM25_SUMMARY_WEIGHT'),
      termCap: intSetting(env, 'BM25_TERM_CAP'),
      rescore: intSetting(env, 'BM25_RESCORE'),
      candidateCap: intSetting(env, 'BM25_CANDIDATE_CAP'),
      indexWorth: numberSetting(env, 'BM25_INDEX_WORTH'),
    },
    ranking: {
      ...(env.HYBRID_ALPHA ? { alpha: numberSetting(env, 'HYBRID_ALPHA') } : {}),
      ...(env.PER_DOCUMENT ? { perDocument: intSetting(env, 'PER_DOCUMENT') } : {}),
      ...(env.PER_DOCUMENT_DECAY ? { perDocumentDecay: numberSetting(env, 'PER_DOCUMENT_DECAY') } : {}),
    },
    jobWorkers: intSetting(env, 'JOB_WORKERS'),
    jobBatchSize: intSetting(env, 'JOB_BATCH_SIZE'),
    jobPollMs: intSetting(env, 'JOB_POLL_MS'),
    jobRetentionDays: intSetting(env, 'JOB_RETENTION_DAYS'),
    readAccess: choiceSetting<ReadAccess>(env, 'READ_ACCESS'),
    maxQueryDepth: intSetting(env, 'MAX_QUERY_DEPTH'),
    maxQueryCost: intSetting(env, 'MAX_QUERY_COST'),
    // Room for one document of MAX_DOCUMENT_BYTES (2 MB) with its JSON escaping.
    maxBodyBytes: intSetting(env, 'MAX_BODY_BYTES'),
    maxQueryTokens: intSetting(env, 'MAX_QUERY_TOKENS'),
    maxAliases: intSetting(env, 'MAX_ALIASES'),
    // 10 retrievals of the default size (100 × 20), or two of the largest (1000 × 1000): what a
    // page comparing modes needs, not a pool's worth of stage-2 scans.
    maxRetrieves: intSetting(env, 'MAX_RETRIEVES'),
    maxRetrievalWork: intSetting(env, 'MAX_RETRIEVAL_WORK'),
    maxDirectives: intSetting(env, 'MAX_DIRECTIVES'),
    maxQueryNodes: intSetting(env, 'MAX_QUERY_NODES'),
    maxArgumentLength: intSetting(env, 'MAX_ARGUMENT_LENGTH'),
    statementTimeoutMs: intSetting(env, 'STATEMENT_TIMEOUT_MS'),
    requestTimeoutMs: intSetting(env, 'REQUEST_TIMEOUT_MS'),
    // Twice the question queue: a burst beyond what the queue could take is refused before it is
    // parsed and validated, instead of after (server.ts).
    maxInFlight: intSetting(env, 'MAX_IN_FLIGHT', 2 * questionQueue.maxWaiting),
    dbConnectTimeoutMs: intSetting(env, 'DB_CONNECT_TIMEOUT_MS'),
    rateLimitQueries: intSetting(env, 'RATE_LIMIT_QUERIES'),
    rateLimitMutations: intSetting(env, 'RATE_LIMIT_MUTATIONS'),
    rateLimitWindowS: intSetting(env, 'RATE_LIMIT_WINDOW_S'),
    rateLimitAuthFailures: intSetting(env, 'RATE_LIMIT_AUTH_FAILURES'),
    // --- observability and shutdown
    logLevel: choiceSetting<LogLevel>(env, 'LOG_LEVEL'),
    logFormat: ((f) => (f === 'auto' && env.NODE_ENV === 'production' ? 'json' : f))(choiceSetting<LogFormat>(env, 'LOG_FORMAT')),
    metricsAccess: choiceSetting<ReadAccess>(env, 'METRICS_ACCESS', choiceSetting<ReadAccess>(env, 'READ_ACCESS')),
    mcpEnabled: boolSetting(env, 'MCP_ENABLED'),
    shutdownGraceMs: intSetting(env, 'SHUTDOWN_GRACE_MS'),
  };
}

/**
 * Connections for the API's pool: 2 per core of this machine, at least 4, at most 32. A search is
 * CPU-bound in PostgreSQL, so more connections than the database's cores only queue there; 2 per
 * core keeps every core busy while some connections wait on the network or the client (PostgreSQL
 * wiki: cores × 2 + spindles). The database's cores are assumed to be about this machine's; set
 * DB_POOL_MAX when they are not (docs/operations.md).
 */
export function defaultPoolSize(cores: number): number {
  return Math.min(32, Math.max(4, 2 * cores));
}

/**
 * Connections one operation may hold: a quarter of the pool, at least one. Four heavy operations
 * can fill the pool together, one cannot (store/connection-share.ts).
 */
export function defaultConnectionShare(poolMax: number): number {
  return Math.max(1, Math.ceil(poolMax / 4));
}

/** A setting's fixed default, else `fallback` (a default computed where it is read). */
function fallbackOf<T>(name: string, value: T | undefined, fallback: T | undefined): T {
  const chosen = value ?? fallback;
  if (chosen === undefined) throw new Error(`${name} has no default: read it only when it is set`);
  return chosen;
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback?: number): number {
  return numeric(env, name, fallback);
}

function numberSetting(env: NodeJS.ProcessEnv, name: string, fallback?: number): number {
  return numeric(env, name, fallback);
}

/** int and number settings: the table's kind says whether a fraction is accepted, and its range. */
function numeric(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined): number {
  const setting = settingOf(name);
  if (setting.kind !== 'int' && setting.kind !== 'number') throw new Error(`${name} is a ${setting.kind} setting`);
  const raw = env[name];
  if (raw === undefined || raw === '') return fallbackOf(name, setting.value, fallback);
  const value = Number(raw);
  const kind = setting.kind === 'int' ? 'an integer' : 'a number';
  const valid = setting.kind === 'int' ? Number.isInteger(value) : Number.isFinite(value);
  if (!valid || value < setting.min || value > setting.max) {
    throw new ConfigError(`${name} must be ${kind} from ${setting.min} to ${setting.max}, got "${raw}"`);
  }
  return value;
}

/** The schemes node-postgres connects with. */
const POSTGRES_SCHEMES = new Set(['postgresql:', 'postgres:']);

/**
 * DATABASE_URL: a PostgreSQL URL, checked at start so that a typo reads as one line naming the
 * setting, not as a driver error later (`mysql://` was accepted; a password with `#` or `/` made
 * pg look up a host named after part of it). The value is never repeated: it may hold a password.
 */
function databaseUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.DATABASE_URL?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(
      'DATABASE_URL is not a URL: expected postgresql://user:password@host:5432/database (characters such as @ # / ? in the password must be percent-encoded)',
    );
  }
  if (!POSTGRES_SCHEMES.has(url.protocol)) {
    // The scheme alone is safe to repeat, and only when there is one ("host:5432/db" parses as scheme "host:").
    const got = raw.includes('://') ? `a ${url.protocol}// URL` : 'no scheme';
    throw new ConfigError(`DATABASE_URL must be a postgresql:// (or postgres://) URL, got ${got}; unset it to use the embedded store (DATA_DIR)`);
  }
  return raw;
}

/**
 * DATABASE_READ_URL: comma-separated PostgreSQL URLs of streaming replicas of DATABASE_URL. Only a
 * PostgreSQL primary has replicas: with the embedded store the setting is refused, not ignored, so
 * a deployment that believes it reads from replicas learns at start that it does not.
 */
function readUrls(env: NodeJS.ProcessEnv): string[] {
  const raw = env.DATABASE_READ_URL;
  if (raw === undefined || raw.trim() === '') return [];
  if (!env.DATABASE_URL) {
    throw new ConfigError(
      'DATABASE_READ_URL needs DATABASE_URL: read replicas are replicas of a PostgreSQL primary, and the embedded store (DATA_DIR) has none',
    );
  }
  const urls = raw.split(',').map((u) => u.trim());
  urls.forEach((url, i) => {
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      protocol = undefined;
    }
    if (!protocol || !POSTGRES_SCHEMES.has(protocol)) {
      // The entry itself is not repeated: it may hold a password.
      throw new ConfigError(`DATABASE_READ_URL entry ${i + 1} of ${urls.length} is not a postgresql:// URL`);
    }
  });
  if (new Set(urls).size !== urls.length) throw new ConfigError('DATABASE_READ_URL names the same replica twice');
  if (urls.includes(env.DATABASE_URL)) throw new ConfigError('DATABASE_READ_URL names DATABASE_URL itself: list the replicas only');
  return urls;
}

/** ENCODER names the model for every role; ENCODER_<ROLE> overrides one role. */
function encoderSpec(env: NodeJS.ProcessEnv): EncoderSpec {
  const all = textSetting(env, 'ENCODER');
  return {
    questionDocument: env.ENCODER_QUESTION_DOCUMENT || all,
    document: env.ENCODER_DOCUMENT || all,
    questionPassage: env.ENCODER_QUESTION_PASSAGE || all,
    passage: env.ENCODER_PASSAGE || all,
  };
}

function boolSetting(env: NodeJS.ProcessEnv, name: string): boolean {
  const setting = settingOf(name);
  if (setting.kind !== 'bool') throw new Error(`${name} is a ${setting.kind} setting`);
  const raw = env[name];
  if (raw === undefined || raw === '') return setting.value;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** T: the union the table's choices make (the table holds them as strings). */
function choiceSetting<T extends string>(env: NodeJS.ProcessEnv, name: string, fallback?: T): T {
  const setting = settingOf(name);
  if (setting.kind !== 'choice') throw new Error(`${name} is a ${setting.kind} setting`);
  const raw = env[name];
  if (raw === undefined || raw === '') return fallbackOf(name, setting.value as T | undefined, fallback);
  if (setting.choices.includes(raw)) return raw as T;
  throw new ConfigError(`${name} must be one of ${setting.choices.join(', ')}, got "${raw}"`);
}

function textSetting(env: NodeJS.ProcessEnv, name: string): string {
  const setting = settingOf(name);
  if (setting.kind !== 'text') throw new Error(`${name} is a ${setting.kind} setting`);
  return env[name] || setting.value;
}
