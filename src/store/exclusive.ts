import { DomainError, ErrorCode } from '../errors';
import type { Database } from './db';

/**
 * Runs `fn` as the only holder of `name` on this store, or refuses with CONFLICT naming `what`.
 * On PostgreSQL a transaction holds an advisory lock for as long as `fn` runs (its own statements
 * go through other connections); it ends with the transaction, so a killed process frees it. On
 * PGlite one process holds the whole store (the data folder's lock), so nothing more is needed.
 */
export async function exclusively<T>(db: Database, name: string, what: string, fn: () => Promise<T>): Promise<T> {
  if (db.kind !== 'postgres') return fn();
  return db.transaction(async (tx) => {
    const [{ locked }] = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [`dhr:${name}`]);
    if (!locked) throw new DomainError(ErrorCode.CONFLICT, `${what} is already running on this store; wait for it to finish`, { argument: name });
    return fn();
  });
}
