import { DomainError, ErrorCode, messageOf } from '../errors';

const CODES = new Set<string>(Object.values(ErrorCode));
/** details.transport of an answer whose connection closed before its end, with no code of its own. */
export const ANSWER_CUT = 'ANSWER_CUT';

interface OperationErrorShape {
  message?: string;
  extensions?: { code?: string; argument?: string };
}

interface GraphQLReply<T> {
  data?: T | null;
  errors?: OperationErrorShape[];
}

/**
 * An operation's first error as a DomainError: its code where this version knows it (else
 * BAD_REQUEST, the code as given kept in details.remoteCode), its message (or `fallback`) and argument.
 */
export function operationError(first: OperationErrorShape, fallback: string, details: Record<string, unknown> = {}): DomainError {
  const remoteCode = first.extensions?.code ?? 'INTERNAL_SERVER_ERROR';
  const code = CODES.has(remoteCode) ? (remoteCode as ErrorCode) : ErrorCode.BAD_REQUEST;
  return new DomainError(code, first.message ?? fallback, {
    argument: first.extensions?.argument,
    details: { ...details, ...(code === remoteCode ? {} : { remoteCode }) },
  });
}

/**
 * One GraphQL operation against a running server (`dhr … --url`): POSTs JSON with Node's fetch,
 * with `Authorization: Bearer <apiKey>` when given, and returns `data`. The server's first error
 * comes back as a DomainError with its code (codes this version does not know become
 * BAD_REQUEST, the server's code kept in details.remoteCode) and message; an unreachable server
 * or an answer that is not GraphQL is SERVICE_UNAVAILABLE naming the URL. details.transport is the
 * connection's error code (ECONNREFUSED, …) and details.httpStatus the answer's status, so a
 * caller can tell a server that is restarting from a refusal (cli/retry.ts). `explain` may restate
 * the server's refusal for the caller (cli/running-server.ts: no key configured).
 */
export async function remoteGraphQL<T>(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  options?: { apiKey?: string; explain?: (error: DomainError) => DomainError },
): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (options?.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables: variables ?? {} }) });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const transport = (cause as { code?: unknown } | undefined)?.code;
    const unreachable = new DomainError(ErrorCode.SERVICE_UNAVAILABLE, `cannot reach the server at ${url}: ${messageOf(cause ?? error)}`, {
      details: typeof transport === 'string' ? { transport } : undefined,
    });
    throw options?.explain ? options.explain(unreachable) : unreachable;
  }
  const httpStatus = response.status;
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    // The connection closed in the middle of the answer (the server stopped).
    const transport = ((error as { cause?: unknown }).cause as { code?: unknown } | undefined)?.code;
    throw new DomainError(ErrorCode.SERVICE_UNAVAILABLE, `the server at ${url} closed the connection while answering: ${messageOf(error)}`, {
      details: { httpStatus, transport: typeof transport === 'string' ? transport : ANSWER_CUT },
    });
  }
  let reply: GraphQLReply<T>;
  try {
    reply = JSON.parse(text) as GraphQLReply<T>;
  } catch {
    throw new DomainError(ErrorCode.SERVICE_UNAVAILABLE, `the server at ${url} answered HTTP ${response.status} without a GraphQL response`, {
      details: { httpStatus },
    });
  }
  const first = reply.errors?.[0];
  if (first) {
    const error = operationError(first, `the server at ${url} answered ${first.extensions?.code ?? 'INTERNAL_SERVER_ERROR'}`, { httpStatus });
    throw options?.explain ? options.explain(error) : error;
  }
  if (reply.data === undefined || reply.data === null) {
    throw new DomainError(ErrorCode.SERVICE_UNAVAILABLE, `the server at ${url} answered HTTP ${response.status} with no data`, { details: { httpStatus } });
  }
  return reply.data;
}
