import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestScope } from './request-scope';

/**
 * One log line per HTTP request once its response is sent (or the client went away): request
 * id, method, path (without the query string, which may carry variables), status, duration, and
 * for GraphQL the operation and outcome. Headers are never logged (they carry API keys).
 */
export function logRequestWhenDone(req: IncomingMessage, res: ServerResponse, scope: RequestScope): void {
  const started = process.hrtime.bigint();
  let logged = false;
  const done = () => {
    if (logged) return;
    logged = true;
    const status = res.writableFinished ? res.statusCode : 499;
    const line = {
      requestId: scope.id,
      method: req.method,
      path: (req.url ?? '/').split('?')[0],
      status,
      durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
      ...(scope.operation ? { operation: scope.operation, type: scope.type, outcome: scope.outcome } : {}),
    };
    if (status >= 500) scope.log.error(line, 'request');
    else scope.log.info(line, 'request');
  };
  res.once('finish', done);
  res.once('close', done);
}
