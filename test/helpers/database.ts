import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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

/**
 * A fresh database for the tests of a describe block (`each: true`: for every test), dropped
 * after: the one lifecycle every database test uses. Read `.db` (and `.kind`, `.url`) inside
 * tests and hooks, once the database exists.
 */
export function useTestDatabase(options: { migrated?: boolean; each?: boolean } = {}): TestDatabase {
  let current: TestDatabase | undefined;
  const [before, after] = options.each ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    current = await createTestDatabase({ migrated: options.migrated });
  });
  after(async () => {
    await current?.drop();
    current = undefined;
  });
  const get = (): TestDatabase => {
    if (!current) throw new Error('the test database exists only inside tests and hooks');
    return current;
  };
  return {
    get db() {
      return get().db;
    },
    get kind() {
      return get().kind;
    },
    get url() {
      return get().url;
    },
    drop: () => get().drop(),
  };
}

/**
 * A store that CLI processes (children) share with the test: a fresh unmigrated server database
 * when DATABASE_URL is set, otherwise a PGlite directory under `work`. `env` is what a child
 * needs to find it; `open` gives the test its own handle (for PGlite, only while no child has
 * the directory open: close it before starting one).
 */
export interface ProcessStore {
  env: Record<string, string>;
  kind: 'pglite' | 'postgres';
  open(): Promise<{ db: Database; close(): Promise<void> }>;
  drop(): Promise<void>;
}

export async function createProcessStore(work: string): Promise<ProcessStore> {
  if (!process.env.DATABASE_URL) {
    const dataDir = join(work, 'data');
    return {
      env: { DATA_DIR: dataDir },
      kind: 'pglite',
      open: async () => {
        const db = await PgliteDatabase.open({ dataDir });
        return { db, close: () => db.close() };
      },
      drop: async () => undefined,
    };
  }
  const t = await createTestDatabase({ migrated: false });
  return {
    env: { DATABASE_URL: t.url! },
    kind: 'postgres',
    // The server database is shared: the test's handle stays open until drop.
    open: async () => ({ db: t.db, close: async () => undefined }),
    drop: () => t.drop(),
  };
}
