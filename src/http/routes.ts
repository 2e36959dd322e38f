import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, ErrorCode, reportedCode } from '../errors';
import type { ServerMetrics } from '../observability/metrics';
import type { ReadyReport } from './readiness';
import { writeRefusal } from './refusal';

export interface OperationalRoutes {
  metrics: ServerMetrics;
  ready: () => Promise<{ ready: boolean; report: ReadyReport }>;
  /** Whether this request may read /metrics (METRICS_ACCESS): the refusal to send, or undefined. */
  authorizeMetrics: (req: IncomingMessage) => Promise<DomainError | undefined>;
  /** Writes a refusal shaped like the API's errors. */
  sendError: (res: ServerResponse, error: DomainError) => void;
}

type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * GET /healthz, /readyz and /metrics, answered before GraphQL sees the request. Returns false for
 * every other path (the caller goes on to GraphQL).
 */
export function operationalRoutes(deps: OperationalRoutes): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const table: Record<string, Route> = {
    // Alive: the process answers HTTP. Nothing else is checked, so a database outage does not get it restarted.
    '/healthz': async (_req, res) => sendJson(res, 200, { status: 'ok' }),
    '/readyz': async (_req, res) => {
      const { ready, report } = await deps.ready();
      sendJson(res, ready ? 200 : 503, report);
    },
    '/metrics': async (req, res) => {
      const refusal = await deps.authorizeMetrics(req);
      if (refusal) return deps.sendError(res, refusal);
      const { contentType, body } = await deps.metrics.render();
      res.statusCode = 200;
      res.setHeader('content-type', contentType);
      res.setHeader('cache-control', 'no-store');
      res.end(body);
    },
  };
  return async (req, res) => {
    const route = table[new URL(req.url ?? '/', 'http://localhost').pathname];
    if (!route) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      res.setHeader('cache-control', 'no-store');
      const refused = new DomainError(ErrorCode.METHOD_NOT_ALLOWED, `${req.method} is not allowed here; use GET`);
      writeRefusal(res, refused, { errors: [{ message: refused.message, extensions: { code: reportedCode(refused.code) } }] });
      return true;
    }
    await route(req, res);
    return true;
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.end(JSON.stringify(body));
}
