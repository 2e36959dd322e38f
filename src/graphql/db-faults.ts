import type { GraphQLError } from 'graphql';
import { ErrorCode } from '../errors';
import { currentLogger } from '../observability/request-scope';
import { classifyDatabaseError, storageFaultOf, type DatabaseFault, type StorageReason } from '../store/faults';
import { storageHealth } from '../store/storage-health';
import { refusalError } from './errors';

/*
 * A database fault is raised while the operation runs (refusesRequest: false): a code whose
 * status holds anywhere (REFUSALS in src/errors.ts: 503 with Retry-After 2 s unavailable, 1 s busy,
 * 30 s storage) sets the response's; a statement timeout and a conflict stay field errors.
 */

/** What clients are told: the cause, never the path (that goes to the log, once). */
const STORAGE_MESSAGES: Record<StorageReason, string> = {
  'read-only':
    'the store is read-only: the database cannot write its files (a read-only or unwritable data folder, or a read-only database); writes are refused until it is writable again, reads go on',
  full: 'the store is full: no space is left where the database writes its files; writes are refused until space is freed, reads go on',
};

/** STORAGE_UNAVAILABLE (HTTP 503, Retry-After) for a write the store refused. */
export function storageFaultError(reason: StorageReason, from?: GraphQLError): GraphQLError {
  return refusalError(ErrorCode.STORAGE_UNAVAILABLE, STORAGE_MESSAGES[reason], { from, details: { storage: reason }, refusesRequest: false });
}

/**
 * The typed error for a database fault, never the driver's text: SERVICE_UNAVAILABLE (HTTP 503,
 * Retry-After) while the database is unreachable, OVERLOADED (HTTP 503, Retry-After) while every
 * pooled connection stayed busy, TIMEOUT for a statement cancelled by STATEMENT_TIMEOUT_MS,
 * CONFLICT (retry: true) for a statement the server rolled back in a deadlock or a serialization
 * failure with a concurrent request.
 */
export function databaseFaultError(fault: Exclude<DatabaseFault, 'storage'>, statementTimeoutMs: number, from?: GraphQLError): GraphQLError {
  const placed = { from, refusesRequest: false };
  if (fault === 'timeout') {
    return refusalError(
      ErrorCode.TIMEOUT,
      `a database statement ran longer than ${statementTimeoutMs} ms (STATEMENT_TIMEOUT_MS) and was cancelled; ask for less (smaller k1, k2 or pages, a narrower filter)`,
      placed,
    );
  }
  if (fault === 'conflict') {
    return refusalError(
      ErrorCode.CONFLICT,
      'the database stopped this request where it met a concurrent one (a deadlock or serialization failure); retry it: what it had committed stays, and is finished by the retry',
      { ...placed, details: { retry: true } },
    );
  }
  if (fault === 'busy') {
    return refusalError(
      ErrorCode.OVERLOADED,
      'the server is busy: every database connection (DB_POOL_MAX) stayed in use while this request waited; retry shortly',
      placed,
    );
  }
  return refusalError(ErrorCode.SERVICE_UNAVAILABLE, 'the database is unavailable; retry shortly', placed);
}

/**
 * The typed error for any database fault; a storage fault is also recorded on the store's health
 * (/readyz) and, the first time, logged with its path.
 */
export function typedFault(error: unknown, location: string | undefined, statementTimeoutMs: number, from?: GraphQLError): GraphQLError | undefined {
  const storage = storageFaultOf(error);
  if (storage) {
    if (location !== undefined) storageHealth({ location }).record(storage, currentLogger());
    return storageFaultError(storage.reason, from);
  }
  const fault = classifyDatabaseError(error);
  return fault && fault !== 'storage' ? databaseFaultError(fault, statementTimeoutMs, from) : undefined;
}

/** A database fault thrown while building the context (the API key lookup), as a typed error; anything else unchanged. */
export function contextFault(error: unknown, statementTimeoutMs: number, location?: string): unknown {
  return typedFault(error, location, statementTimeoutMs) ?? error;
}
