/**
 * The errors a caller can act on, for every layer. Code below the API throws a DomainError with
 * one of these codes; src/graphql/errors.ts turns it into `extensions.code`, and REFUSALS below
 * gives it its HTTP status and Retry-After.
 * Anything else that escapes is a bug: clients see INTERNAL_SERVER_ERROR and a request id.
 * Deliberately free of GraphQL, so the store and pipeline can use it.
 */
export enum ErrorCode {
  /** An argument is out of range or malformed; `argument` names it. */
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  /** A document cannot be ingested (per-document outcome, not a request failure). */
  INGEST_INVALID = 'INGEST_INVALID',
  NOT_FOUND = 'NOT_FOUND',
  /** The path does not serve the request's method (HTTP 405, with Allow); clients read BAD_REQUEST (REFUSALS). */
  METHOD_NOT_ALLOWED = 'METHOD_NOT_ALLOWED',
  CONFLICT = 'CONFLICT',
  /** The server lacks something the request needs (e.g. encoders). */
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
  /**
   * The store refuses writes: its data folder or disk is read-only or full, or the database is
   * read-only (HTTP 503, Retry-After). `storage` says which ('read-only', 'full'); reads go on.
   */
  STORAGE_UNAVAILABLE = 'STORAGE_UNAVAILABLE',
  /** A Citus worker holding part of the corpus cannot be reached; `details.worker` names it. */
  SHARD_UNAVAILABLE = 'SHARD_UNAVAILABLE',
  /** A statement or the whole request ran past its limit (STATEMENT_TIMEOUT_MS, REQUEST_TIMEOUT_MS). */
  TIMEOUT = 'TIMEOUT',
  /** Over the rate limit (HTTP 429, Retry-After). */
  RATE_LIMITED = 'RATE_LIMITED',
  /** The server's own bounded queues are full (question encoding): retry later (HTTP 503). */
  OVERLOADED = 'OVERLOADED',
  UNAUTHENTICATED = 'UNAUTHENTICATED',
  FORBIDDEN = 'FORBIDDEN',
  JOB_CONFLICT = 'JOB_CONFLICT',
  MODEL_INCOMPLETE = 'MODEL_INCOMPLETE',
  MODEL_ACTIVE = 'MODEL_ACTIVE',
  MODEL_INVALID = 'MODEL_INVALID',
  MODEL_UNAVAILABLE = 'MODEL_UNAVAILABLE',
  DIMENSION_MISMATCH = 'DIMENSION_MISMATCH',
  QUERY_TOO_DEEP = 'QUERY_TOO_DEEP',
  QUERY_TOO_COSTLY = 'QUERY_TOO_COSTLY',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  /** The HTTP request itself is malformed (e.g. a body that is not JSON). */
  BAD_REQUEST = 'BAD_REQUEST',
  INTERNAL_SERVER_ERROR = 'INTERNAL_SERVER_ERROR',
}

/**
 * What a refusal with a code tells HTTP: its status and, for those that say when to come back,
 * its Retry-After. The one table for every layer (GraphQL errors, the HTTP server's own refusals,
 * MCP's), after Apollo Server's ApolloServerErrorCode; src/graphql/errors.ts and
 * src/http/refusal.ts write what it says. A code that is not here answers HTTP 200 with the error
 * beside the data (or the HTTP layer's own fallback).
 */
export interface Refusal {
  status: number;
  /** Seconds, or 'details': the refusal's details.retryAfterSeconds (a rate limiter's own wait). */
  retryAfter?: number | 'details';
  /**
   * The status holds wherever the code is raised, a resolver or a database fault included.
   * Without it, it holds only where the code refuses the request as a whole (before the
   * operation runs, or in the HTTP layer); raised while the operation runs, it is a field error.
   */
  anywhere?: true;
  /**
   * The code clients read (extensions.code, MCP's data.code) where it is not this one: a finer
   * status inside a code they already handle (docs/graphql.md lists 405 under BAD_REQUEST).
   */
  reportedAs?: ErrorCode;
}

export const REFUSALS: Readonly<Partial<Record<ErrorCode, Refusal>>> = {
  // Before the operation runs (its arguments' strings and nesting, MAX_ARGUMENT_LENGTH); a resolver's is a field error.
  [ErrorCode.BAD_USER_INPUT]: { status: 400 },
  [ErrorCode.QUERY_TOO_DEEP]: { status: 400, anywhere: true },
  [ErrorCode.QUERY_TOO_COSTLY]: { status: 400, anywhere: true },
  [ErrorCode.PAYLOAD_TOO_LARGE]: { status: 413, anywhere: true },
  [ErrorCode.BAD_REQUEST]: { status: 400, anywhere: true },
  [ErrorCode.METHOD_NOT_ALLOWED]: { status: 405, anywhere: true, reportedAs: ErrorCode.BAD_REQUEST },
  // A path that is off here (MCP without MCP_ENABLED); a resolver's (a missing document) is a field error.
  [ErrorCode.NOT_FOUND]: { status: 404 },
  [ErrorCode.UNAUTHENTICATED]: { status: 401, anywhere: true },
  [ErrorCode.FORBIDDEN]: { status: 403, anywhere: true },
  [ErrorCode.RATE_LIMITED]: { status: 429, retryAfter: 'details', anywhere: true },
  // A full question queue or connection pool, or too many requests in flight: they drain in milliseconds to seconds.
  [ErrorCode.OVERLOADED]: { status: 503, retryAfter: 1, anywhere: true },
  // The database is unreachable.
  [ErrorCode.SERVICE_UNAVAILABLE]: { status: 503, retryAfter: 2, anywhere: true },
  // A read-only or full store needs someone to act (remount, free space): retrying sooner is pointless.
  [ErrorCode.STORAGE_UNAVAILABLE]: { status: 503, retryAfter: 30, anywhere: true },
  // The whole request past REQUEST_TIMEOUT_MS; one statement past STATEMENT_TIMEOUT_MS is a field error.
  [ErrorCode.TIMEOUT]: { status: 503, retryAfter: 1 },
};

/** The HTTP status and Retry-After (seconds, as the header writes them) a refusal answers with. */
export interface RefusalHttp {
  status: number;
  retryAfter?: string;
}

/**
 * What REFUSALS says for a code: `refusesRequest` when the code refuses the request as a whole,
 * false for an error raised while the operation runs; undefined where no status holds.
 */
export function refusalHttp(code: ErrorCode, details: Record<string, unknown> | undefined, refusesRequest: boolean): RefusalHttp | undefined {
  const refusal = REFUSALS[code];
  if (!refusal || (!refusal.anywhere && !refusesRequest)) return undefined;
  const seconds = refusal.retryAfter === 'details' ? details?.retryAfterSeconds : refusal.retryAfter;
  return { status: refusal.status, ...(typeof seconds === 'number' ? { retryAfter: String(seconds) } : {}) };
}

/** The code clients read for `code`: REFUSALS' reportedAs, else the code itself. */
export function reportedCode(code: ErrorCode): ErrorCode {
  return REFUSALS[code]?.reportedAs ?? code;
}

export interface DomainErrorOptions {
  /** The argument (or input field) at fault, for BAD_USER_INPUT and friends. */
  argument?: string;
  /** Extra machine-readable facts, e.g. `missing` counts of MODEL_INCOMPLETE. */
  details?: Record<string, unknown>;
}

/** An expected failure: its message is written for the caller and safe to show. */
export class DomainError extends Error {
  readonly argument?: string;
  readonly details?: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.argument = options.argument;
    this.details = options.details;
  }
}

export function badUserInput(message: string, argument?: string): DomainError {
  return new DomainError(ErrorCode.BAD_USER_INPUT, message, { argument });
}

export function notFound(message: string, argument?: string): DomainError {
  return new DomainError(ErrorCode.NOT_FOUND, message, { argument });
}

export function conflict(message: string, argument?: string): DomainError {
  return new DomainError(ErrorCode.CONFLICT, message, { argument });
}

export function serviceUnavailable(message: string): DomainError {
  return new DomainError(ErrorCode.SERVICE_UNAVAILABLE, message);
}

/** No key, or a key that is malformed, unknown or revoked: who is asking is not known. */
export function unauthenticated(message: string): DomainError {
  return new DomainError(ErrorCode.UNAUTHENTICATED, message);
}

/**
 * Over a rate limit: RATE_LIMITED with details.retryAfterSeconds, the limiter's wait in whole
 * seconds (at least 1), which is also what Retry-After says; `message` gets those seconds.
 */
export function rateLimited(msBeforeNext: number, message: (retryAfterSeconds: number) => string): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new DomainError(ErrorCode.RATE_LIMITED, message(retryAfterSeconds), { details: { retryAfterSeconds } });
}

/** A valid key whose role may not do this. */
export function forbidden(message: string): DomainError {
  return new DomainError(ErrorCode.FORBIDDEN, message);
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null) {
    // Thrown objects that are not Errors, such as Emscripten's file-system errors out of PGlite
    // ({ name: 'ErrnoError', errno: 20 }), read "[object Object]" through String().
    const e = error as { name?: unknown; message?: unknown; code?: unknown; errno?: unknown };
    if (typeof e.message === 'string' && e.message !== '') return e.message;
    const said = [e.code !== undefined ? `code ${String(e.code)}` : '', e.errno !== undefined ? `errno ${String(e.errno)}` : ''].filter(Boolean);
    if (typeof e.name === 'string' || said.length > 0)
      return `${typeof e.name === 'string' ? e.name : 'error'}${said.length > 0 ? ` (${said.join(', ')})` : ''}`;
    return echo(error);
  }
  return String(error);
}

/** Longest echo of a refused value in a message; longer ones are cut with an ellipsis. */
const ECHO_MAX = 80;

/**
 * A refused value as the caller wrote it, for "got …" in a message: JSON (`{"x":1}`, `[1]`, `"3"`),
 * so an object, a list and a string are told apart from a number; numbers JSON cannot write
 * (NaN, Infinity) as JavaScript writes them.
 */
export function echo(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined; // a cycle: no caller input holds one, but never throw while refusing
  }
  text ??= value === undefined ? 'nothing' : String(value);
  return text.length > ECHO_MAX ? `${text.slice(0, ECHO_MAX - 1)}…` : text;
}
