import { DomainError, ErrorCode } from '../errors';

/**
 * One GraphQL operation against a running server (POST JSON): returns `data`, or throws a
 * DomainError with the first error's code and message. Minimal on purpose; the CLI's other
 * `--url` commands share it.
 */
export async function remoteGraphQL<T>(url: string, query: string, variables?: Record<string, unknown>, options?: { apiKey?: string }): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options?.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  } catch (error) {
    throw new DomainError(ErrorCode.SERVICE_UNAVAILABLE, `cannot reach ${url}: ${(error as Error).message}`, { argument: 'url' });
  }
  let body: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = (await response.json()) as typeof body;
  } catch {
    throw new DomainError(ErrorCode.BAD_REQUEST, `${url} answered ${response.status} without GraphQL JSON`, { argument: 'url' });
  }
  const first = body.errors?.[0];
  if (first) {
    const code = Object.values(ErrorCode).includes(first.extensions?.code as ErrorCode) ? (first.extensions!.code as ErrorCode) : /^(GRAPHQL_|BAD_)/.test(first.extensions?.code ?? '') ? ErrorCode.BAD_REQUEST : ErrorCode.INTERNAL_SERVER_ERROR;
    throw new DomainError(code, first.message);
  }
  return body.data as T;
}
