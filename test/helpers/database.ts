import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Database } from '../../src/store/db';
import { migrate } from '../../src/store/migrate';
import { PgliteDatabase } from '../../src/store/pglite';
import { PostgresDatabase } from '../../src/store/postgres';

/**
 * The database the suite runs against: a PostgreSQL server when DATABASE_URL is set (a fresh
 * database per test file, dropped afterwards), otherwise a fresh in-memory PGlite.
 */
export interface TestDatabase {
  db: Database;
  kind: 'pglite' | 'postgres';
  /** For tests that open their own connections (server mode, CLI). */
  url?: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  let result: TestDatabase;
  if (!serverUrl) {
    const db = await PgliteDatabase.open();
    result = { db, kind: 'pglite', drop: () => db.close() };
  } else {
    const name = `dhr_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
    const url = withDatabase(serverUrl, name);
    const db = new PostgresDatabase({ url });
    result = {
      db,
      kind: 'postgres',
      url,
      drop: async () => {
        await db.close();
        await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
    };
  }
  if (options.migrated !== false) await migrate(result.db);
  return result;
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
