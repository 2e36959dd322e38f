import { HeaderMap } from '@apollo/server';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError, ErrorCode } from '../errors';
import { defaultLogger, type Logger } from '../observability/logger';
import { currentLogger, currentRequest, newRequestId, runInRequest } from '../observability/request-scope';

/**
 * The API's one error normalizer (after Apollo Server's own errors module): a DomainError keeps
 * its message and gets `extensions.code` (+ `argument`, details) and its HTTP status; an error
 * GraphQL or Apollo raised with a code of its own (validation, parsing, variables) passes
 * through; anything else is a bug, answered as INTERNAL_SERVER_ERROR with a request id and
 * logged in full under that id. No stack trace, SQL or path reaches a client unless DHR_DEBUG=1.
 */

// Re-exported so resolvers keep one import for the errors they throw.
export { badUserInput, notFound } from '../errors';

/** HTTP status per code, where the code means the whole request failed; others answer 200 with errors. */
const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  [ErrorCode.UNAUTHENTICATED]: 401,
  [ErrorCode.FORBIDDEN]: 403,
  [ErrorCode.QUERY_TOO_DEEP]: 400,
  [ErrorCode.QUERY_TOO_COSTLY]: 400,
  [ErrorCode.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCode.BAD_REQUEST]: 400,
  [ErrorCode.OVERLOADED]: 503,
  [ErrorCode.RATE_LIMITED]: 429,
};

export function httpStatusOf(code: ErrorCode): number | undefined {
  return HTTP_STATUS[code];
}

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

function extensionsOf(error: DomainError): Record<string, unknown> {
  return { code: error.code, ...(error.argument ? { argument: error.argument } : {}), ...error.details };
}

/** The Retry-After header value of a refusal that says when to come back (details.retryAfterSeconds). */
export function retryAfterOf(error: DomainError): string | undefined {
  const seconds = error.details?.retryAfterSeconds;
  return typeof seconds === 'number' ? String(seconds) : undefined;
}

/** For what throws outside execution (context creation): a GraphQLError Apollo reads the status from. */
export function toGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  if (error instanceof DomainError) {
    const status = httpStatusOf(error.code);
    const retryAfter = retryAfterOf(error);
    const headers = retryAfter === undefined ? undefined : new HeaderMap([['retry-after', retryAfter]]);
    return new GraphQLError(error.message, {
      originalError: error,
      extensions: { ...extensionsOf(error), ...(status ? { http: { status, ...(headers ? { headers } : {}) } } : {}) },
    });
  }
  return new GraphQLError('internal server error', { originalError: error instanceof Error ? error : undefined });
}

/** Apollo's formatError hook. */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = originalOf(error);
  const { stacktrace: _, ...extensions } = formatted.extensions ?? {};
  const stacktrace = original instanceof Error ? original.stack?.split('\n') : undefined;
  if (original instanceof DomainError) {
    return { ...formatted, message: original.message, extensions: { ...extensions, ...extensionsOf(original), ...(debug() ? { stacktrace } : {}) } };
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
