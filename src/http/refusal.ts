import type { ServerResponse } from 'node:http';
import { refusalHttp, type DomainError } from '../errors';

/**
 * Writes a refusal the HTTP layer makes before GraphQL or MCP sees the request: the status
 * (`status` where the route has its own, e.g. 405, else REFUSALS' for the code, else `fallback`),
 * Retry-After where REFUSALS gives one, and the JSON body.
 */
export function writeRefusal(res: ServerResponse, error: DomainError, body: unknown, status?: number, fallback = 500): void {
  const http = refusalHttp(error.code, error.details, true);
  res.statusCode = status ?? http?.status ?? fallback;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  if (http?.retryAfter !== undefined) res.setHeader('retry-after', http.retryAfter);
  res.end(JSON.stringify(body));
}
