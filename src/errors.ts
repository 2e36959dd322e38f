/**
 * The errors a caller can act on, for every layer. Code below the API throws a DomainError with
 * one of these codes; src/graphql/errors.ts turns it into `extensions.code` and an HTTP status.
 * Anything else that escapes is a bug: clients see INTERNAL_SERVER_ERROR and a request id.
 * Deliberately free of GraphQL, so the store and pipeline can use it.
 */
export enum ErrorCode {
  /** An argument is out of range or malformed; `argument` names it. */
  BAD_USER_INPUT = 'BAD_USER_INPUT',
  /** A document cannot be ingested (per-document outcome, not a request failure). */
  INGEST_INVALID = 'INGEST_INVALID',
  NOT_FOUND = 'NOT_FOUND',
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

/** A valid key whose role may not do this. */
export function forbidden(message: string): DomainError {
  return new DomainError(ErrorCode.FORBIDDEN, message);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
