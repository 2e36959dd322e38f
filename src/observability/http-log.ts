import type { IncomingMessage, ServerResponse } from 'node:http';
import { writesForPeople } from './logger';
import type { RequestScope } from './request-scope';

/** Longest client-given operation name kept for the log line: it is free text from the request. */
const MAX_OPERATION_NAME = 200;

const operationNames = new WeakMap<RequestScope, string>();

/**
 * The client's operationName, as soon as the request is read: a request refused before Apollo
 * resolves its operation (a bad key, a limit) still logs which operation it was.
 */
export function noteOperationName(scope: RequestScope | undefined, name: unknown): void {
  if (scope && typeof name === 'string' && name.length > 0 && !operationNames.has(scope)) {
    operationNames.set(scope, name.slice(0, MAX_OPERATION_NAME));
  }
}

/**
 * One log line per HTTP request once its response is sent (or the client went away): request
 * id, method, path (without the query string, which may carry variables), status, duration, and
 * for GraphQL the client's operationName (when it sent one or the document names its
 * operation) and the operation and outcome. Headers are never logged (they carry API keys).
 * On a person's terminal (human lines) an answered request is logged at debug, so the lines a
 * browser's requests make do not bury the demo's progress; failed ones stay at info and error.
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
      ...(operationNames.has(scope) ? { operationName: operationNames.get(scope) } : {}),
      ...(scope.operation ? { operation: scope.operation, type: scope.type, outcome: scope.outcome } : {}),
    };
    if (status >= 500) scope.log.error(line, 'request');
    else if (status < 400 && writesForPeople(scope.log)) scope.log.debug(line, 'request');
    else scope.log.info(line, 'request');
  };
  res.once('finish', done);
  res.once('close', done);
}
