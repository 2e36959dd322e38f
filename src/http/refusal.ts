import type { ServerResponse } from 'node:http';
import { refusalHttp, type DomainError } from '../errors';

/**
 * Writes a refusal the HTTP layer makes before GraphQL or MCP sees the request: the status
 * (REFUSALS' for the code, else `fallback`), Retry-After where REFUSALS gives one, and the JSON
 * body (whose code is the error's reportedCode).
 */
export function writeRefusal(res: ServerResponse, error: DomainError, body: unknown, fallback = 500): void {
  const http = refusalHttp(error.code, error.details, true);
  res.statusCode = http?.status ?? fallback;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  if (http?.retryAfter !== undefined) res.setHeader('retry-after', http.retryAfter);
  res.end(JSON.stringify(body));
}
