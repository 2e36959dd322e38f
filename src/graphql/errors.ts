import { HeaderMap } from '@apollo/server';
import { GraphQLError, type GraphQLErrorOptions, type GraphQLFormattedError } from 'graphql';
import { DomainError, ErrorCode, refusalHttp, reportedCode, type DomainErrorOptions } from '../errors';
import { defaultLogger, type Logger } from '../observability/logger';
import { currentLogger, currentRequest, newRequestId, runInRequest } from '../observability/request-scope';

/**
 * The API's one error normalizer (after Apollo Server's own errors module): a DomainError keeps
 * its message and gets `extensions.code` (+ `argument`, details) and its HTTP status; an error
 * GraphQL or Apollo raised with a code of its own (validation, parsing, variables) passes
 * through; anything else is a bug, answered as INTERNAL_SERVER_ERROR with a request id and
 * logged in full under that id. No stack trace, SQL or path reaches a client unless DHR_DEBUG=1.
 * Every GraphQLError the API raises itself is built by refusalError below (statuses and
 * Retry-After from REFUSALS in src/errors.ts); test/error-table.test.ts checks that none is
 * built elsewhere.
 */

// Re-exported so resolvers keep one import for the errors they throw.
export { badUserInput, notFound } from '../errors';

export { newRequestId };

/** Runs one HTTP request with its id (and its server's logger), so errors formatted meanwhile can name it. */
export function withRequestId<T>(id: string, fn: () => T, log: Logger = defaultLogger()): T {
  return runInRequest({ id, log }, fn);
}

/**
 * What was thrown: GraphQL wraps a resolver's error (with a path), Apollo a plugin's or the
 * context's (without one); Apollo's unwrapResolverError only sees the first kind.
 */
export function originalOf(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/** Read per error, so a running server can be switched for a test. */
function debug(): boolean {
  return process.env.DHR_DEBUG === '1';
}

function extensionsOf(code: ErrorCode, { argument, details }: DomainErrorOptions): Record<string, unknown> {
  return { code: reportedCode(code), ...(argument ? { argument } : {}), ...details };
}

/**
 * `extensions.http` for a refusal: the status and Retry-After REFUSALS gives its code, which
 * Apollo writes on the response; undefined where none holds (see refusalHttp).
 */
export function httpExtension(
  code: ErrorCode,
  details: Record<string, unknown> | undefined,
  refusesRequest: boolean,
): { status: number; headers?: HeaderMap } | undefined {
  const http = refusalHttp(code, details, refusesRequest);
  if (!http) return undefined;
  return { status: http.status, ...(http.retryAfter === undefined ? {} : { headers: new HeaderMap([['retry-after', http.retryAfter]]) }) };
}

export interface RefusalOptions extends DomainErrorOptions {
  /** The resolver's error this one replaces (a database fault's): its place (nodes, path) is kept. */
  from?: GraphQLError;
  originalError?: Error;
  /**
   * True (the default) for what refuses the request as a whole (a plugin's check before the
   * operation runs); false for an error raised while it runs, which gets only a status that
   * holds anywhere (REFUSALS).
   */
  refusesRequest?: boolean;
}

/**
 * The one place a GraphQLError is built: for a refusal, its message, `extensions.code`,
 * `argument` and details as DomainError's are, and the HTTP status and Retry-After of its code.
 */
export function refusalError(code: ErrorCode, message: string, options: RefusalOptions = {}): GraphQLError {
  const { from, originalError, refusesRequest = true } = options;
  const http = httpExtension(code, options.details, refusesRequest);
  return newGraphQLError(message, {
    nodes: from?.nodes,
    path: from?.path,
    originalError,
    extensions: { ...extensionsOf(code, options), ...(http ? { http } : {}) },
  });
}

function newGraphQLError(message: string, options: GraphQLErrorOptions): GraphQLError {
  return new GraphQLError(message, options);
}

/** refusalError for a DomainError: its code, message, argument and details. */
export function domainRefusal(error: DomainError, options: Omit<RefusalOptions, 'argument' | 'details'> = {}): GraphQLError {
  return refusalError(error.code, error.message, { argument: error.argument, details: error.details, ...options });
}

/**
 * For what throws outside execution (context creation): a GraphQLError Apollo reads the status
 * from. A DomainError gets the status of its code where that holds anywhere (401, 429).
 */
export function toGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  if (error instanceof DomainError) return domainRefusal(error, { originalError: error, refusesRequest: false });
  return newGraphQLError('internal server error', { originalError: error instanceof Error ? error : undefined });
}

/** Apollo's formatError hook. */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = originalOf(error);
  const { stacktrace: _, ...extensions } = formatted.extensions ?? {};
  const stacktrace = original instanceof Error ? original.stack?.split('\n') : undefined;
  if (original instanceof DomainError) {
    return {
      ...formatted,
      message: original.message,
      extensions: { ...extensions, ...extensionsOf(original.code, original), ...(debug() ? { stacktrace } : {}) },
    };
  }
  // Codes GraphQL and Apollo set themselves (validation, parsing, variables) are meant for clients.
  const code = extensions.code;
  if (typeof code === 'string' && code !== ErrorCode.INTERNAL_SERVER_ERROR) {
    return { ...formatted, extensions: { ...extensions, ...(debug() ? { stacktrace } : {}) } };
  }
  if (isRequestRefusal(original)) {
    return { ...formatted, extensions: { ...extensions, code: ErrorCode.BAD_REQUEST, ...(debug() ? { stacktrace } : {}) } };
  }
  const requestId = currentRequest()?.id ?? newRequestId();
  currentLogger().error({ requestId, err: original }, 'internal error');
  return {
    message: `internal server error (request id ${requestId})`,
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: {
      code: ErrorCode.INTERNAL_SERVER_ERROR,
      requestId,
      ...(debug() ? { message: formatted.message, stacktrace } : {}),
    },
  };
}

/**
 * A refusal Apollo raises itself with a 4xx status but no code: a persisted query whose
 * sha256Hash is not the query's, or whose version is not 1. Nothing was thrown (no original
 * error), so it is the request that is wrong, not the server.
 */
function isRequestRefusal(error: unknown): boolean {
  if (!(error instanceof GraphQLError) || error.originalError || error.extensions.code !== undefined) return false;
  const status = (error.extensions.http as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
