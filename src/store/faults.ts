import type { Pool } from 'pg';

/**
 * Database faults: errors that say the database is unreachable or was restarted (as opposed to
 * an error in our SQL or the caller's input), statements the server cancelled for running past
 * statement_timeout, and storage that refuses writes (a read-only or full data folder or disk, a
 * read-only database), and a wait for a pooled connection that every busy caller kept (busy, not
 * down: busy-pool.ts). Errors from pg, PGlite, Node's file system, Prisma's driver adapter and
 * Prisma itself are recognised by walking their `cause` chains. A conflict is a transaction the
 * server rolled back because it met a concurrent one (a deadlock, a serialization failure): the
 * same request run again succeeds, so the caller is told to retry rather than shown a bug.
 */
export type DatabaseFault = 'unavailable' | 'busy' | 'timeout' | 'storage' | 'conflict';

/** Why the store refuses writes. */
export type StorageReason = 'read-only' | 'full';

export interface StorageFault {
  reason: StorageReason;
  /** The original message: it names the file (for the log, never for clients). */
  detail: string;
  /** The SQLSTATE or errno code it came with. */
  code?: string;
}

/** disk_full; read_only_sql_transaction (default_transaction_read_only, a standby). */
const STORAGE_SQLSTATES: Record<string, StorageReason> = { '53100': 'full', '25006': 'read-only' };
/** Node's (and Emscripten's NODEFS) errno codes of a file system that refuses writes. */
const STORAGE_ERRNOS: Record<string, StorageReason> = { ENOSPC: 'full', EDQUOT: 'full', EROFS: 'read-only', EACCES: 'read-only', EPERM: 'read-only' };
/**
 * SQLSTATEs under which PostgreSQL (and PGlite's WASM backend) reports a failed file operation,
 * the OS's reason at the end of the message: io_error, insufficient_privilege ("could not open
 * file \"base/5/2691\": Read-only file system"), internal_error, system_error.
 */
const FILE_ERROR_SQLSTATES = new Set(['58030', '42501', 'XX000', '58000']);
const FULL_MESSAGES = /No space left on device|Disk quota exceeded/;
/** Only a file operation's "Permission denied": PostgreSQL's privilege errors say "permission denied for table …". */
const READ_ONLY_MESSAGES = /Read-only file system|could not [^"]*"[^"]*": (Permission denied|Operation not permitted)/;
/** A failed file operation as PostgreSQL words it, for errors that carry no code (a wrapper's copy of the message). */
const FILE_OPERATION = /could not [a-z ]+ "[^"]*": /;

/** SQLSTATEs of a lost or refused connection: connection_exception (08…), shutdowns (57P01–57P03), too_many_connections. */
const UNAVAILABLE_SQLSTATES = /^(08\d{3}|57P0[1-3]|53300)$/;
/** query_canceled: statement_timeout (or a cancel request). */
const TIMEOUT_SQLSTATE = '57014';
/** transaction_rollback's serialization_failure and deadlock_detected. */
const CONFLICT_SQLSTATES = new Set(['40001', '40P01']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** Prisma's connection errors: can't reach, timed out, closed, too many connections. */
const PRISMA_UNAVAILABLE = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
/** pg and pg-pool report a dropped connection only in words. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|not queryable|terminating connection|the database system is (starting up|shutting down|in recovery mode)|Can't reach database server|Server has closed the connection/i;
const TIMEOUT_MESSAGES = /canceling statement due to statement timeout/i;

/**
 * The error and what it wraps, outermost first (at most 10, no cycles): GraphQL's originalError,
 * a cause, and graphql-js's NonErrorThrown.thrownValue (a driver's bare { code: 'ECONNRESET' } object).
 */
function* errorChain(error: unknown): Generator<Record<string, unknown>> {
  const seen = new Set<unknown>();
  let current: unknown = error;
  for (let depth = 0; current && typeof current === 'object' && !seen.has(current) && depth < 10; depth++) {
    seen.add(current);
    yield current as Record<string, unknown>;
    const e = current as { cause?: unknown; originalError?: unknown; thrownValue?: unknown };
    current = e.originalError ?? e.cause ?? e.thrownValue;
  }
}

/** The first fault `classify` finds along the error's chain. */
function firstAlongChain<T>(error: unknown, classify: (e: Record<string, unknown>) => T | undefined): T | undefined {
  for (const e of errorChain(error)) {
    const fault = classify(e);
    if (fault) return fault;
  }
  return undefined;
}

export function classifyDatabaseError(error: unknown): DatabaseFault | undefined {
  return firstAlongChain(error, classifyOne);
}

/** The storage fault behind this error (a read-only or full store), if that is what it is. */
export function storageFaultOf(error: unknown): StorageFault | undefined {
  return firstAlongChain(error, storageOne);
}

export function isStorageFault(error: unknown): boolean {
  return storageFaultOf(error) !== undefined;
}

function codeOf(e: Record<string, unknown>): string | undefined {
  // Prisma's driver adapter error: { kind: 'postgres', code: '57P01', … } or { kind: 'DatabaseNotReachable' … }.
  return typeof e.code === 'string' ? e.code : typeof e.originalCode === 'string' ? e.originalCode : undefined;
}

function storageOne(e: Record<string, unknown>): StorageFault | undefined {
  const code = codeOf(e);
  const message = typeof e.message === 'string' ? e.message : '';
  const known = code ? (STORAGE_SQLSTATES[code] ?? STORAGE_ERRNOS[code]) : undefined;
  if (known) return { reason: known, detail: message, code };
  // Words only where a file operation failed: a caller's text quoted in another error must not count.
  if (code === undefined ? !FILE_OPERATION.test(message) : !FILE_ERROR_SQLSTATES.has(code)) return undefined;
  if (FULL_MESSAGES.test(message)) return { reason: 'full', detail: message, code };
  if (READ_ONLY_MESSAGES.test(message)) return { reason: 'read-only', detail: message, code };
  return undefined;
}

function classifyOne(e: Record<string, unknown>): DatabaseFault | undefined {
  if (storageOne(e)) return 'storage';
  // By name, not instanceof: Prisma may hand on a copy.
  if (e.name === 'PoolBusyError') return 'busy';
  const code = codeOf(e);
  if (code === TIMEOUT_SQLSTATE) return 'timeout';
  if (code && CONFLICT_SQLSTATES.has(code)) return 'conflict';
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

/** What guardPool tells its log about a dropped connection (the caller adds where the database is). */
export interface ConnectionLostFields {
  err: Error;
  /** SQLSTATE (57P01 on a restart) or errno code, when the error has one. */
  code?: unknown;
}

/**
 * pg-pool listens for 'error' only on idle clients; a client whose connection drops while
 * checked out (a query in flight, a transaction, Prisma's adapter) emits 'error' with no listener,
 * which kills the process. Every client gets a listener for its whole life when it connects; the
 * query in flight still fails with the error and the dead client leaves the pool on release.
 */
export function guardPool(pool: Pool, log: (message: string, fields?: ConnectionLostFields) => void = () => undefined): void {
  let last = 0;
  const onError = (error: Error) => {
    // Once per second at most: a restart drops every connection at once.
    const now = Date.now();
    if (now - last > 1000) log('database connection lost', { err: error, code: (error as { code?: unknown }).code });
    last = now;
  };
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
}
