import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StorageFault, StorageReason } from './faults';

/** Where storage faults are logged: the server's pino logger, or anything shaped like it. */
export interface FaultLog {
  error(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Whether a store takes writes, as last seen: the storage fault a write met (read-only, full),
 * until a write succeeds or the data folder's write check passes again. Shared by everything that
 * writes to one database (requests, job workers, /readyz), keyed by its location, so a fault is
 * logged once at error level, with the path, and not again until it has cleared.
 */
export class StorageHealth {
  private fault?: StorageFault & { since: Date };

  constructor(readonly location: string) {}

  get current(): (StorageFault & { since: Date }) | undefined {
    return this.fault;
  }

  /** Records a fault; the first of a spell is logged (error level, with the path and the original message). */
  record(fault: StorageFault, log: FaultLog): void {
    if (this.fault?.reason === fault.reason) return;
    this.fault = { ...fault, since: new Date() };
    log.error(
      { storage: fault.reason, code: fault.code, database: this.location, cause: fault.detail },
      `the store is ${fault.reason}: writes are refused until it can be written again`,
    );
  }

  /** A write succeeded (or the write check passed): the spell is over, said once at info level. */
  clear(log: FaultLog): void {
    if (!this.fault) return;
    const { reason, since } = this.fault;
    this.fault = undefined;
    log.info({ storage: 'ok', was: reason, since: since.toISOString(), database: this.location }, 'the store takes writes again');
  }
}

const healths = new Map<string, StorageHealth>();

/** The health of the store at this location (Database.location: a data folder or a redacted URL). */
export function storageHealth(db: { readonly location: string }): StorageHealth {
  let health = healths.get(db.location);
  if (!health) healths.set(db.location, (health = new StorageHealth(db.location)));
  return health;
}

const PROBE_NAME = '.dhr-write-check';

/**
 * Whether PGlite's data folder takes a write: one byte written to a file of its own and removed.
 * A read-only mount or an unwritable folder refuses the file, a full disk its byte. undefined: writable.
 */
export async function checkDataFolder(dataDir: string): Promise<StorageFault | undefined> {
  const path = join(dataDir, PROBE_NAME);
  try {
    await writeFile(path, 'x');
    await rm(path, { force: true });
    return undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const reason: StorageReason | undefined =
      code === 'ENOSPC' || code === 'EDQUOT' ? 'full' : code === 'EROFS' || code === 'EACCES' || code === 'EPERM' ? 'read-only' : undefined;
    // Half-written (full after the open): leave no file behind.
    await rm(path, { force: true }).catch(() => undefined);
    if (!reason) throw error;
    return { reason, detail: (error as Error).message, code: code as string };
  }
}
