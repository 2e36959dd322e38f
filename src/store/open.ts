import type { Config } from '../config';
import type { Database } from './db';
import { migrate } from './migrate';
import { PgliteDatabase } from './pglite';
import { PostgresDatabase } from './postgres';

/** DATABASE_URL → that PostgreSQL server; otherwise embedded PGlite persisted in dataDir. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'statementTimeoutMs' | 'dbConnectTimeoutMs'>>,
): Promise<Database> {
  if (config.databaseUrl) {
    return new PostgresDatabase({
      url: config.databaseUrl,
      statementTimeoutMs: config.statementTimeoutMs,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      log: (m) => console.error(m),
    });
  }
  return PgliteDatabase.open({ dataDir: config.dataDir });
}

export async function openMigratedDatabase(config: Parameters<typeof openDatabase>[0]): Promise<Database> {
  const db = await openDatabase(config);
  try {
    await migrate(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}
