/**
 * Every environment variable the product reads: one table, from which `dhr --help` prints its
 * environment list and docs/configuration.md is generated (`npx tsx scripts/docs-configuration.ts`;
 * test/configuration.test.ts checks both, and that every variable src/ reads is here). A setting's
 * default and accepted range are written here only: src/config.ts reads them from `setting`.
 */
import { DEFAULT_QUERY_THREADS } from '../encoders/types';
import { DEFAULT_QUESTION_QUEUE } from '../encoders/questions';
import { DEFAULT_MODEL } from '../encoders/spec';
import { DEFAULT_MAX_METADATA_DEPTH, DEFAULT_MAX_SECTION_DEPTH } from '../ingest/depth';
import { DEFAULT_INGEST_OPTIONS } from '../ingest/types';
import { LOG_FORMATS, LOG_LEVELS } from '../observability/logger';
import { RANKING_LIMITS } from '../retrieval/parameters';
import { DEFAULT_BM25, DEFAULT_EF_FACTOR, DEFAULT_MAX_SCAN_TUPLES, ITERATIVE_SCANS } from '../retrieval/types';
import { DEFER_INDEXES_FROM_PASSAGES } from '../store/deferred-indexes';
import { DEFAULT_PREPARED_STATEMENTS } from '../store/statements';

/** Who may read: `public`, no key needed; `key`, a reader or admin key (READ_ACCESS, METRICS_ACCESS). */
export const READ_ACCESSES = ['public', 'key'] as const;

export const VARIABLE_GROUPS = {
  database: 'Database',
  server: 'Server',
  ingest: 'Ingest',
  encoders: 'Encoders and embedding',
  jobs: 'Job workers',
  retrieval: 'Retrieval',
  access: 'Access and limits',
  observability: 'Logs and metrics',
  cli: 'Command line',
  development: 'Development',
} as const;

export type VariableGroup = keyof typeof VARIABLE_GROUPS;

/**
 * How src/config.ts reads a variable: its kind, its default where it has a fixed one (`value`
 * absent: none, or one computed where it is read, which `default` then describes) and the values
 * it accepts; anything else stops the start with one line naming the variable.
 */
export type Setting =
  | { kind: 'int' | 'number'; value?: number; min: number; max: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'choice'; value?: string; choices: readonly string[] }
  | { kind: 'text'; value: string };

const int = (value: number | undefined, min: number, max: number): Setting => ({ kind: 'int', value, min, max });
const number = (value: number | undefined, min: number, max: number): Setting => ({ kind: 'number', value, min, max });
const bool = (value: boolean): Setting => ({ kind: 'bool', value });
const choice = (choices: readonly string[], value?: string): Setting => ({ kind: 'choice', value, choices });
const text = (value: string): Setting => ({ kind: 'text', value });

export interface EnvironmentVariable {
  name: string;
  group: VariableGroup;
  /** The default as a reader sees it (Markdown), where `setting.value` does not say it alone. */
  default?: string;
  setting?: Setting;
  /** One line (Markdown: `code` and [links](docs/…) relative to the repository root). */
  description: string;
}

export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'DATABASE_URL',
    group: 'database',
    default: 'unset',
    description:
      'PostgreSQL server (needs pgvector), a `postgresql://` or `postgres://` URL (other schemes are refused at start; percent-encode `@ # / ?` in a password). Unset: embedded PGlite with pgvector, persisted in `DATA_DIR`. A server that cannot be reached, a refused password or a missing database stops the start with one line naming `DATABASE_URL`, where it points and what to check',
  },
  {
    name: 'DATABASE_READ_URL',
    group: 'database',
    default: 'unset',
    description:
      'comma-separated streaming replicas of `DATABASE_URL` that serve queries (retrieval, navigation, `stats`); writes, jobs and admin views stay on the primary; read-your-writes per API key ([scale-out](docs/scale-out.md#read-replicas)). Refused without `DATABASE_URL`',
  },
  {
    name: 'REPLICA_MAX_LAG_MS',
    group: 'database',
    setting: int(5000, 100, 3_600_000),
    description: 'a replica further behind the primary than this many ms is skipped',
  },
  { name: 'REPLICA_CHECK_MS', group: 'database', setting: int(200, 10, 60_000), description: "how often replicas' replay positions are checked, ms" },
  { name: 'DATA_DIR', group: 'database', setting: text('./data'), description: 'embedded database directory' },
  {
    name: 'DB_POOL_MAX',
    group: 'database',
    default: '2 × cores, 4–32',
    setting: int(undefined, 1, 10_000),
    description: "PostgreSQL connections in the server's pool ([operations](docs/operations.md#connection-pool))",
  },
  {
    name: 'DB_PREPARED_STATEMENTS',
    group: 'database',
    setting: int(DEFAULT_PREPARED_STATEMENTS, 0, 1000),
    description:
      "search statement texts kept prepared per PostgreSQL connection (each planned per question); `0` behind PgBouncer's transaction mode before 1.21 ([operations](docs/operations.md#connection-pool))",
  },
  {
    name: 'DB_CONNECTIONS_PER_REQUEST',
    group: 'database',
    default: '`DB_POOL_MAX / 4`, ≥ 1',
    setting: int(undefined, 1, 10_000),
    description: 'pooled connections one operation holds at once; the rest of its statements wait their turn',
  },
  {
    name: 'STATEMENT_TIMEOUT_MS',
    group: 'database',
    setting: int(30_000, 0, 2_147_483_647),
    description: 'PostgreSQL `statement_timeout` of every connection (0: none; migrations run without it); a cancelled statement is `TIMEOUT`',
  },
  { name: 'DB_CONNECT_TIMEOUT_MS', group: 'database', setting: int(5000, 100, 600_000), description: 'longest wait for a new PostgreSQL connection' },
  {
    name: 'DHR_DISTRIBUTED',
    group: 'database',
    default: 'unset',
    setting: choice(['citus'] as const),
    description: '`citus`: `DATABASE_URL` is a Citus coordinator; the migration runner distributes the store ([scale-out](docs/scale-out.md))',
  },
  { name: 'PORT', group: 'server', setting: int(4000, 0, 65535), description: 'the port the server listens on' },
  { name: 'HOST', group: 'server', setting: text('127.0.0.1'), description: 'the address the server listens on' },
  {
    name: 'MCP_ENABLED',
    group: 'server',
    setting: bool(false),
    description:
      '`dhr serve` answers agents over the Model Context Protocol at `/mcp` (Streamable HTTP; the keys and roles of GraphQL); `dhr mcp` serves the same tools over stdio ([operations](docs/operations.md#mcp-agents))',
  },
  {
    name: 'REQUEST_TIMEOUT_MS',
    group: 'server',
    setting: int(60_000, 0, 2_147_483_647),
    description: 'a request not answered by then gets 503 `TIMEOUT` (0: none)',
  },
  {
    name: 'MAX_IN_FLIGHT',
    group: 'server',
    default: '2 × `QUESTION_QUEUE` (`512`)',
    setting: int(undefined, 0, 2_000_000),
    description: 'HTTP requests in flight at most; more get 503 `OVERLOADED` at once, before their body is read (health checks and metrics exempt; 0: none)',
  },
  {
    name: 'SHUTDOWN_GRACE_MS',
    group: 'server',
    setting: int(10_000, 0, 600_000),
    description: 'on SIGTERM/SIGINT, how long requests in flight may take to finish before their connections are cut; 10 s later the exit is forced (code 1)',
  },
  {
    name: 'MAX_WORDS',
    group: 'ingest',
    setting: int(DEFAULT_INGEST_OPTIONS.maxWords, 1, 10_000),
    description:
      "largest passage in words (changing it changes content hashes, so re-ingest re-splits); passages are also split to the passage encoder's token budget",
  },
  {
    name: 'MAX_DOCUMENT_BYTES',
    group: 'ingest',
    setting: int(DEFAULT_INGEST_OPTIONS.maxDocumentBytes, 1, 1 << 30),
    description: 'largest text a document stores (a source may hold 8 × it of markup; a source whose text is over it is ingested up to it, with a warning)',
  },
  { name: 'MAX_INGEST_BATCH', group: 'ingest', setting: int(1000, 1, 100_000), description: 'most documents in one `ingestDocuments`' },
  {
    name: 'INGEST_JOB_DOCUMENTS',
    group: 'ingest',
    setting: int(64, 0, 100_000),
    description: 'an `ingestDocuments` over this many documents becomes an ingest job, answered at once',
  },
  {
    name: 'INGEST_JOB_BYTES',
    group: 'ingest',
    setting: int(64 << 10, 0, 1 << 30),
    description: "an `ingestDocuments` over this many bytes of its documents' JSON becomes an ingest job, answered at once",
  },
  {
    name: 'INGEST_JOB_BATCH_DOCUMENTS',
    group: 'ingest',
    setting: int(16, 1, 10_000),
    description: "most documents of an ingest job's batch (one transaction)",
  },
  {
    name: 'INGEST_JOB_BATCH_BYTES',
    group: 'ingest',
    setting: int(256 << 10, 1, 1 << 30),
    description: "most bytes of an ingest job's batch (one transaction)",
  },
  {
    name: 'BULK_DEFER_INDEXES_PASSAGES',
    group: 'ingest',
    setting: int(DEFER_INDEXES_FROM_PASSAGES, 0, 1_000_000_000),
    description:
      "a bulk load of this many passages into a PostgreSQL store without postings builds the postings' indexes once at its end (3.33× the per-document path, 1.28× indexing as it writes; searches scan meanwhile); `0`: never ([operations](docs/operations.md#crash-consistency-of-ingest))",
  },
  {
    name: 'MAX_METADATA_DEPTH',
    group: 'ingest',
    setting: int(DEFAULT_MAX_METADATA_DEPTH, 1, 1000),
    description: "deepest nesting of a metadata filter or a document's metadata (`BAD_USER_INPUT`; `dhr ingest`: that document fails)",
  },
  {
    name: 'MAX_SECTION_DEPTH',
    group: 'ingest',
    setting: int(DEFAULT_MAX_SECTION_DEPTH, 1, 1000),
    description: 'deepest section nesting of an ingested title tree (the same)',
  },
  {
    name: 'ENCODER',
    group: 'encoders',
    setting: text(DEFAULT_MODEL),
    description: 'model for all four DHR roles of a store that has no active model yet: `use-lite` or a custom model folder',
  },
  { name: 'ENCODER_QUESTION_DOCUMENT', group: 'encoders', default: '`ENCODER`', description: 'model for questions compared with document vectors' },
  { name: 'ENCODER_DOCUMENT', group: 'encoders', default: '`ENCODER`', description: 'model for document summaries' },
  { name: 'ENCODER_QUESTION_PASSAGE', group: 'encoders', default: '`ENCODER`', description: 'model for questions compared with passage vectors' },
  { name: 'ENCODER_PASSAGE', group: 'encoders', default: '`ENCODER`', description: 'model for passages' },
  { name: 'MODEL_CACHE_DIR', group: 'encoders', default: '`.cache/models`', description: 'where the converted default model is cached' },
  {
    name: 'ENCODER_THREADS',
    group: 'encoders',
    default: '`0` (all cores; `dhr serve`: all but one)',
    setting: int(0, 0, 256),
    description:
      'onnxruntime intra-op threads for corpus embedding (ingest, jobs); idle threads never spin. `dhr serve` encodes documents and passages in a worker thread of lower priority, so questions are answered while it embeds',
  },
  {
    name: 'ENCODER_QUERY_THREADS',
    group: 'encoders',
    setting: int(DEFAULT_QUERY_THREADS, 0, 256),
    description:
      'onnxruntime intra-op threads for questions (a separate session; [benchmarks](docs/benchmarks.md#encoder-threads-and-spinning--npm-run-benchencoder))',
  },
  {
    name: 'QUESTION_BATCH',
    group: 'encoders',
    setting: int(DEFAULT_QUESTION_QUEUE.maxBatch, 1, 1024),
    description: 'most questions in one model run (concurrent requests share runs)',
  },
  {
    name: 'QUESTION_QUEUE',
    group: 'encoders',
    setting: int(DEFAULT_QUESTION_QUEUE.maxWaiting, 1, 1_000_000),
    description: 'most questions waiting for the model; more get 503 `OVERLOADED` (`Retry-After: 1`)',
  },
  {
    name: 'QUESTION_CACHE',
    group: 'encoders',
    setting: int(DEFAULT_QUESTION_QUEUE.cacheEntries, 0, 10_000_000),
    description: 'question vectors kept per model (0: none)',
  },
  {
    name: 'EMBED_BATCH_SIZE',
    group: 'encoders',
    setting: int(64, 1, 4096),
    description: 'rows read, encoded and written per step when embedding (the encoder runs its own forward batches: 16 for USE-lite, the fastest measured)',
  },
  { name: 'EMBED_ON_INGEST', group: 'encoders', setting: bool(true), description: 'embed created and updated documents as part of ingest' },
  {
    name: 'MODELS_DIR',
    group: 'encoders',
    default: '`DATA_DIR/models`',
    description: 'the only folder `registerEmbeddingModel` (GraphQL) loads model folders from ([operations](docs/operations.md#switching-embedding-models))',
  },
  {
    name: 'JOB_WORKERS',
    group: 'jobs',
    setting: int(1, 0, 64),
    description: 'ingest and re-embedding job workers the server runs in-process (0: leave jobs to `dhr worker`)',
  },
  { name: 'JOB_BATCH_SIZE', group: 'jobs', setting: int(32, 1, 4096), description: 'items per job batch: the most a crash can make a worker redo' },
  { name: 'JOB_POLL_MS', group: 'jobs', setting: int(1000, 10, 600_000), description: 'how often an idle worker looks for jobs' },
  {
    name: 'JOB_RETENTION_DAYS',
    group: 'jobs',
    setting: int(30, 0, 36_500),
    description: 'finished ingest, embedding and tune jobs are deleted this long after they end, by an idle worker (0: kept)',
  },
  { name: 'HNSW_EF_SEARCH', group: 'retrieval', setting: int(100, 1, 1000), description: 'floor of the HNSW candidate list for retrieval' },
  {
    name: 'HNSW_ITERATIVE_SCAN',
    group: 'retrieval',
    setting: choice(ITERATIVE_SCANS, 'strict_order'),
    description:
      'how a filtered HNSW scan goes on until enough rows pass: `strict_order` or `relaxed_order` (faster, rows may come out of the index slightly out of order; results are re-sorted by score). `off` is not offered: a filtered search could then return fewer than k results',
  },
  {
    name: 'HNSW_MAX_SCAN_TUPLES',
    group: 'retrieval',
    setting: int(DEFAULT_MAX_SCAN_TUPLES, 1, 2_147_483_647),
    description: "the most tuples one iterative HNSW scan visits (pgvector's `hnsw.max_scan_tuples`); a very selective filter needs more",
  },
  {
    name: 'HNSW_EF_FACTOR',
    group: 'retrieval',
    setting: number(DEFAULT_EF_FACTOR, 1, 100),
    description:
      'HNSW candidate list per row a stage returns (stage 1: ef_search = 3·k1); at 1M (100,000 documents), 2 gave recall@20 0.984–1.000, 3 and 4 gave 0.991–1.000; at 2.5M (250,000 documents) 3 gave 0.936–0.946 and even 10 only 0.957: raising it does not fix recall there ([benchmarks](docs/benchmarks.md#retrieval-on-citus--npm-run-benchcitus))',
  },
  {
    name: 'BM25_K1',
    group: 'retrieval',
    setting: number(DEFAULT_BM25.k1, 0, 10),
    description: "Okapi BM25's term-frequency saturation (not DHR's k1); chosen on the dev splits (literature: 1.2)",
  },
  { name: 'BM25_B', group: 'retrieval', setting: number(DEFAULT_BM25.b, 0, 1), description: "BM25's length normalization (literature: 0.75)" },
  {
    name: 'BM25_SUMMARY_WEIGHT',
    group: 'retrieval',
    setting: number(DEFAULT_BM25.summaryWeight, 0, 100),
    description: 'document BM25F: one occurrence in the summary counts this many in the full text',
  },
  {
    name: 'BM25_TERM_CAP',
    group: 'retrieval',
    setting: int(DEFAULT_BM25.termCap, 1, 100_000_000),
    description: "postings read for the question's rarest term (best impact first; commoner terms fewer, by idf) before exact rescoring",
  },
  {
    name: 'BM25_RESCORE',
    group: 'retrieval',
    setting: int(DEFAULT_BM25.rescore, 1, 1_000_000),
    description: 'candidates, best partial score first, scored exactly over every question term',
  },
  {
    name: 'BM25_CANDIDATE_CAP',
    group: 'retrieval',
    setting: int(DEFAULT_BM25.candidateCap, 1, 100_000_000),
    description:
      "the default mode's document stage: postings read for the rarest term where BM25 only proposes documents (every candidate is then scored exactly), rescoring 2 × k1",
  },
  {
    name: 'PGLITE_BM25_INDEX',
    group: 'retrieval',
    setting: bool(true),
    description:
      "false: a new embedded (PGlite) store is made without pg_textsearch's BM25 index (migration 0026), and passage BM25 takes its candidates from the SQL postings, as on PostgreSQL 15. A store that has the index keeps it",
  },
  {
    name: 'BM25_INDEX_WORTH',
    group: 'retrieval',
    setting: number(DEFAULT_BM25.indexWorth, 0, 1_000_000),
    description:
      "where the store has a BM25 index (PGlite): passage BM25 reads it when the question's posting lists hold more than this many postings per candidate it takes from the index (2 × the passages asked for, at least 40), the postings otherwise; 0: always the index. Every score is the postings' exact BM25 either way",
  },
  {
    name: 'HYBRID_ALPHA',
    group: 'retrieval',
    default: 'per mode',
    setting: number(undefined, RANKING_LIMITS.alphaMin, RANKING_LIMITS.alphaMax),
    description: "weight of the dense score in the hybrid modes (both stages) when neither a question nor the corpus's settings give one",
  },
  {
    name: 'PER_DOCUMENT',
    group: 'retrieval',
    default: 'none',
    setting: int(undefined, 1, RANKING_LIMITS.perDocumentMax),
    description:
      "at most this many passages of one document when neither a question nor the corpus's settings give `perDocument` (1–1000): set 1 where questions ask for a page rather than a passage",
  },
  {
    name: 'PER_DOCUMENT_DECAY',
    group: 'retrieval',
    default: "the mode's (0.01 for `HYBRID_HIERARCHICAL`, else 0)",
    setting: number(undefined, 0, RANKING_LIMITS.perDocumentDecayMax),
    description:
      "each further passage of one document loses this much score, when neither a question nor the corpus's settings give `perDocumentDecay` (0–1; 0: none)",
  },
  { name: 'MAX_PAGE_SIZE', group: 'access', setting: int(100, 1, 10_000), description: 'largest `first`/`last` of a connection, most ids in one `nodes` call' },
  {
    name: 'READ_ACCESS',
    group: 'access',
    setting: choice(READ_ACCESSES, 'public'),
    description: '`public`: queries need no key; `key`: every request needs a reader or admin key (mutations always need admin)',
  },
  { name: 'MAX_QUERY_DEPTH', group: 'access', setting: int(12, 1, 1000), description: 'deepest field nesting of an operation (`QUERY_TOO_DEEP`)' },
  {
    name: 'MAX_QUERY_COST',
    group: 'access',
    setting: int(500_000, 1, 1_000_000_000),
    description: 'largest estimated cost of an operation (`QUERY_TOO_COSTLY`; estimate in [`docs/operations.md`](docs/operations.md#limits))',
  },
  {
    name: 'MAX_BODY_BYTES',
    group: 'access',
    setting: int(4 << 20, 1024, 1 << 30),
    description: 'largest HTTP request body (413 `PAYLOAD_TOO_LARGE`); room for one document of `MAX_DOCUMENT_BYTES`',
  },
  {
    name: 'MAX_QUERY_TOKENS',
    group: 'access',
    setting: int(5000, 10, 10_000_000),
    description: 'most lexical tokens in a query document (refused while parsing, `GRAPHQL_PARSE_FAILED`)',
  },
  { name: 'MAX_ALIASES', group: 'access', setting: int(30, 0, 100_000), description: 'most aliases in an operation, fragments expanded (`QUERY_TOO_COSTLY`)' },
  {
    name: 'MAX_DIRECTIVES',
    group: 'access',
    setting: int(50, 0, 100_000),
    description: 'most directives in an operation, fragments expanded (`QUERY_TOO_COSTLY`)',
  },
  { name: 'MAX_RETRIEVES', group: 'access', setting: int(10, 1, 100_000), description: 'most retrievals one operation starts (`QUERY_TOO_COSTLY`)' },
  {
    name: 'MAX_RETRIEVAL_WORK',
    group: 'access',
    setting: int(2_000_000, 1, 1_000_000_000),
    description: "the k1 × k2 of an operation's retrievals, summed, at most (`QUERY_TOO_COSTLY`)",
  },
  {
    name: 'MAX_QUERY_NODES',
    group: 'access',
    setting: int(10_000, 10, 10_000_000),
    description: 'most selections the cost estimate visits, fragments expanded (`QUERY_TOO_COSTLY`)',
  },
  {
    name: 'MAX_ARGUMENT_LENGTH',
    group: 'access',
    setting: int(4096, 16, 1 << 30),
    description: 'longest string argument, in characters (`BAD_USER_INPUT` naming it; ingested documents excepted)',
  },
  {
    name: 'RATE_LIMIT_QUERIES',
    group: 'access',
    setting: int(1200, 0, 1_000_000_000),
    description: 'queries per `RATE_LIMIT_WINDOW_S` per API key (per client address without a key); 0: unlimited; over → 429 `RATE_LIMITED`',
  },
  {
    name: 'RATE_LIMIT_MUTATIONS',
    group: 'access',
    setting: int(120, 0, 1_000_000_000),
    description: 'mutations per `RATE_LIMIT_WINDOW_S` per API key (per client address without a key); 0: unlimited; over → 429 `RATE_LIMITED`',
  },
  {
    name: 'RATE_LIMIT_AUTH_FAILURES',
    group: 'access',
    setting: int(20, 0, 1_000_000_000),
    description:
      'failed authentications (unknown, revoked or malformed keys) per `RATE_LIMIT_WINDOW_S` per client address; past it wrong keys from that address get 429 `RATE_LIMITED` (valid keys are served); 0: unlimited',
  },
  { name: 'RATE_LIMIT_WINDOW_S', group: 'access', setting: int(60, 1, 86_400), description: 'the rate-limit window, seconds' },
  {
    name: 'LOG_LEVEL',
    group: 'observability',
    setting: choice(LOG_LEVELS, 'info'),
    description:
      "the server's log on stderr: `fatal`, `error`, `warn`, `info` (one line per request; on a terminal only failed ones), `debug` (every request), `trace`, `silent`",
  },
  {
    name: 'LOG_FORMAT',
    group: 'observability',
    setting: choice(LOG_FORMATS, 'auto'),
    description:
      '`auto`: one human line per entry when stderr is a terminal, JSON lines when it is not or `NODE_ENV=production`; `json`; `pretty` (human lines anywhere) ([logs](docs/operations.md#logs))',
  },
  {
    name: 'METRICS_ACCESS',
    group: 'observability',
    default: 'as `READ_ACCESS`',
    setting: choice(READ_ACCESSES),
    description: '`public`: anyone may read `/metrics`; `key`: a reader or admin key is needed',
  },
  { name: 'DHR_API_KEY', group: 'cli', default: 'unset', description: 'the API key CLI commands send with `--url`' },
  { name: 'NODE_ENV', group: 'observability', default: 'unset', description: '`production`: `LOG_FORMAT=auto` writes JSON lines even on a terminal' },
  { name: 'DHR_DEBUG', group: 'development', default: 'unset', description: '`1`: error responses carry stack traces; never in production' },
  {
    name: 'DHR_TEST_CRASH_AFTER',
    group: 'development',
    default: 'unset',
    description: 'tests only: `dhr ingest` kills itself after a step (`write:N`, `index:0`, `embed:N`, `batch:N`), to test crash recovery',
  },
];

const BY_NAME = new Map(ENVIRONMENT_VARIABLES.map((v) => [v.name, v]));

/** The setting of a variable of the table (a name not in it, or one without a setting, is a bug). */
export function settingOf(name: string): Setting {
  const setting = BY_NAME.get(name)?.setting;
  if (!setting) throw new Error(`${name} has no setting in src/config/variables.ts`);
  return setting;
}

/** The default as the help and the docs say it: the prose where there is some, else the value. */
export function defaultText(v: EnvironmentVariable): string {
  if (v.default !== undefined) return v.default;
  const value = v.setting && 'value' in v.setting ? v.setting.value : undefined;
  return value === undefined ? 'unset' : `\`${value}\``;
}

/** Markdown to plain text for a terminal: `code` → code, [text](target) → text (target). */
function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\(([^)]+)\)/g, (_, text: string, target: string) => `${text.replace(/`/g, '')} (${target})`).replace(/`/g, '');
}

/** Words wrapped to width: the first line starts with first, the others with indent. */
function wrap(first: string, text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(' ')) {
    if (line.trim() && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line.trim() ? `${line} ${word}` : line + word;
  }
  lines.push(line);
  return lines.join('\n');
}

/** `dhr --help`'s environment list: every variable, by group, with its default. */
export function environmentHelp(width = 100): string {
  const out = ['', 'Environment (defaults in parentheses; docs/configuration.md):'];
  for (const [group, title] of Object.entries(VARIABLE_GROUPS)) {
    out.push(`  ${title}:`);
    for (const v of ENVIRONMENT_VARIABLES.filter((x) => x.group === group)) {
      out.push(wrap('    ', `${v.name} (${plain(defaultText(v))}): ${plain(v.description)}`, width, '        '));
    }
  }
  return out.join('\n');
}

/** docs/configuration.md, whole: links rewritten relative to docs/. */
export function configurationPage(): string {
  const local = (markdown: string) => markdown.replace(/\]\(docs\//g, '](');
  const out = [
    '# Configuration',
    '',
    '<!-- Generated from src/config/variables.ts by `npx tsx scripts/docs-configuration.ts`; test/configuration.test.ts checks it. Edit the table, not this page. -->',
    '',
    'Every setting is an environment variable, and every one has a default, so the embedded demo needs none. A value that does not parse or is out of range stops the start with one line naming the variable. `dhr --help` prints the same list.',
  ];
  for (const [group, title] of Object.entries(VARIABLE_GROUPS)) {
    out.push('', `## ${title}`, '', '| variable | default | meaning |', '|---|---|---|');
    for (const v of ENVIRONMENT_VARIABLES.filter((x) => x.group === group)) out.push(`| \`${v.name}\` | ${local(defaultText(v))} | ${local(v.description)} |`);
  }
  return out.join('\n') + '\n';
}
