import type { Config } from '../config';
import { DomainError } from '../errors';
import type { Database } from '../store/db';
import { openMigratedDatabase } from '../store/open';

/** Refusals (a DomainError: bad input, a conflict, too few pairs) are answers, not crashes: `label: message`, exit code 1. */
export async function answering(label: string, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.error(`${label}: ${error.message}`);
    return 1;
  }
}

/** One command on the store: opened (and migrated) for it, closed after; refusals answered as `answering` does. */
export async function onStore(config: Config, label: string, fn: (db: Database) => Promise<number>): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    return await answering(label, () => fn(db));
  } finally {
    await db.close();
  }
}
