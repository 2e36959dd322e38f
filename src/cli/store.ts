import type { Config } from '../config';
import { rebuildBm25 } from '../store/bm25-rebuild';
import { migrate } from '../store/migrate';
import { openDatabase, openMigratedDatabase } from '../store/open';

/** `dhr migrate`. */
export async function migrateCommand(config: Config): Promise<number> {
  const db = await openDatabase(config);
  try {
    const applied = await migrate(db, undefined, { distributed: config.distributed });
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
  } finally {
    await db.close();
  }
  return 0;
}

/** `dhr rebuild-bm25`: what it rebuilt, as JSON (on Citus, rebuildBm25's refusal is the message). */
export async function rebuildBm25Command(config: Config): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    const started = Date.now();
    const result = await rebuildBm25(db);
    console.log(JSON.stringify({ ...result, seconds: (Date.now() - started) / 1000 }, null, 2));
  } finally {
    await db.close();
  }
  return 0;
}
