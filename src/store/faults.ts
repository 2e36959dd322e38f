import type { Pool } from 'pg';

/**
 * Database faults: errors that say the database is unreachable or was restarted (as opposed to
 * an error in our SQL or the caller's input), and statements the server cancelled for running
 * past statement_timeout. Errors from pg, from Prisma's driver adapter and from Prisma itself
 * are recognised by walking their `cause` chains.
 */
export type DatabaseFault = 'unavailable' | 'timeout';

/** SQLSTATEs of a lost or refused connection: connection_exception (08…), shutdowns (57P01–57P03), too_many_connections. */
const UNAVAILABLE_SQLSTATES = /^(08\d{3}|57P0[1-3]|53300)$/;
/** query_canceled: statement_timeout (or a cancel request). */
const TIMEOUT_SQLSTATE = '57014';
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** Prisma's connection errors: can't reach, timed out, closed, too many connections. */
const PRISMA_UNAVAILABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
/** pg and pg-pool report a dropped connection only in words. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|not queryable|terminating connection|the database system is (starting up|shutting down|in recovery mode)|Can't reach database server|Server has closed the connection/i;
const TIMEOUT_MESSAGES = /canceling statement due to statement timeout/i;

export function classifyDatabaseError(error: unknown): DatabaseFault | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && !seen.has(current) && depth < 10; depth++) {
    seen.add(current);
    const fault = classifyOne(current as Record<string, unknown>);
    if (fault) return fault;
    const e = current as { cause?: unknown; originalError?: unknown };
    current = e.originalError ?? e.cause;
  }
  return undefined;
}

function classifyOne(e: Record<string, unknown>): DatabaseFault | undefined {
  // Prisma's driver adapter error: { kind: 'postgres', code: '57P01', … } or { kind: 'DatabaseNotReachable' … }.
  const code = typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : undefined;
  if (code === TIMEOUT_SQLSTATE) return 'timeout';
  if (code && (UNAVAILABLE_SQLSTATES.test(code) || NETWORK_CODES.has(code) || PRISMA_UNAVAILABLE.has(code))) return 'unavailable';
  const kind = typeof e.kind === 'string' ? e.kind : undefined;
  if (kind && /NotReachable|ConnectionClosed|SocketTimeout|TooManyConnections/.test(kind)) return 'unavailable';
  const message = typeof e.message === 'string' ? e.message : '';
  if (TIMEOUT_MESSAGES.test(message)) return 'timeout';
  if (UNAVAILABLE_MESSAGES.test(message)) return 'unavailable';
  return undefined;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return classifyDatabaseError(error) === 'unavailable';
}

/**
 * pg-pool listens for 'error' only on idle clients; a client whose connection drops while
 * checked out (a query in flight, a transaction, Prisma's adapter) emits 'error' with no listener,
 * which kills the process. Every client gets a listener for its whole life when it connects; the
 * query in flight still fails with the error and the dead client leaves the pool on release.
 */
export function guardPool(pool: Pool, log: (message: string) => void = () => undefined): void {
  let last = 0;
  const onError = (error: Error) => {
    // Once per second at most: a restart drops every connection at once.
    const now = Date.now();
    if (now - last > 1000) log(`database connection lost: ${error.message}`);
    last = now;
  };
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
}
