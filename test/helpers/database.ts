import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { packageRoot } from '../../src/paths';
import type { Database } from '../../src/store/db';
import { loadMigrations, migrate } from '../../src/store/migrate';
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

/** connectTimeoutMs: PostgreSQL only, how long a statement waits for a pooled connection (the server's default 5 s otherwise). */
export async function createTestDatabase(options: { migrated?: boolean; connectTimeoutMs?: number } = {}): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  const migrated = options.migrated !== false;
  if (!serverUrl) {
    // A copy of a folder that ran initdb (and the migrations) once: a fresh in-memory PGlite
    // spends seconds in initdb, most of a test's setup on a busy machine.
    const dataDir = await copyPgliteTemplate(migrated);
    const db = await PgliteDatabase.open({ dataDir });
    return {
      db,
      kind: 'pglite',
      drop: async () => {
        await db.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const name = `dhr_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // Migrated: a copy of a template database that ran the migrations once (the same state).
  const template = migrated ? ` TEMPLATE ${await postgresTemplate(serverUrl)}` : '';
  await adminQuery(serverUrl, `CREATE DATABASE ${name}${template}`);
  const url = withDatabase(serverUrl, name);
  const db = new PostgresDatabase({ url, connectTimeoutMs: options.connectTimeoutMs });
  return {
    db,
    kind: 'postgres',
    url,
    drop: async () => {
      await db.close();
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * Templates are keyed by what they contain (the migrations' checksums, the PGlite or pgvector
 * version), so a changed migration makes a new one and an unchanged one is reused across runs.
 */
function templateKey(...parts: string[]): string {
  const migrations = loadMigrations().map((m) => `${m.version}:${m.checksum}`);
  return createHash('sha256')
    .update([...parts, ...migrations].join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/** Where PGlite folders go: memory-backed where the machine has one, as the in-memory PGlite was. */
function pgliteRoot(): string {
  const root = join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'dhr-test-pglite');
  mkdirSync(root, { recursive: true });
  if (!swept) sweepOrphans(root);
  swept = true;
  return root;
}

let swept = false;

/** Removes the folders of processes that died before their drop (killed, crashed): /dev/shm is memory. */
function sweepOrphans(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = Number(/^(?:db|building)-(\d+)-/.exec(name)?.[1]);
    if (pid && !alive(pid)) rmSync(join(root, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A fresh copy (a new folder) of the PGlite template: initialised, and migrated if asked. */
async function copyPgliteTemplate(migrated: boolean): Promise<string> {
  const copy = mkdtempSync(join(pgliteRoot(), `db-${process.pid}-`));
  cpSync(await pgliteTemplate(migrated), copy, { recursive: true });
  return copy;
}

/** The PGlite template folder, built on first use. */
async function pgliteTemplate(migrated: boolean): Promise<string> {
  const root = pgliteRoot();
  const pkg = join(packageRoot(), 'node_modules', '@electric-sql', 'pglite', 'package.json');
  const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version;
  // pg_textsearch in the key: a store made with it has the BM25 index (migration 0026), one made without has not.
  const template = join(root, `template-${templateKey(version, migrated ? 'migrated' : 'bare', 'pg_textsearch')}`);
  if (!existsSync(template)) {
    // Built aside and renamed into place: a reader never sees half a template, and of two
    // processes building at once the second's rename fails and its copy is dropped.
    const building = mkdtempSync(join(root, `building-${process.pid}-`));
    const db = await PgliteDatabase.open({ dataDir: building });
    try {
      if (migrated) await migrate(db);
    } finally {
      await db.close();
    }
    try {
      renameSync(building, template);
    } catch {
      rmSync(building, { recursive: true, force: true });
    }
  }
  return template;
}

/** The name of a migrated template database on the server, created on first use. */
async function postgresTemplate(serverUrl: string): Promise<string> {
  const [vector] = await adminRows<{ v: string }>(serverUrl, "SELECT default_version AS v FROM pg_available_extensions WHERE name = 'vector'");
  const name = `dhr_template_${templateKey(vector?.v ?? 'no pgvector')}`;
  if ((await adminRows(serverUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length > 0) return name;
  // Built under a name of its own, then renamed: of two processes building at once, the
  // second's rename fails and its copy is dropped. No connections: CREATE DATABASE … TEMPLATE
  // refuses a template anyone is connected to.
  const building = `dhr_template_building_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${building}`);
  try {
    const db = new PostgresDatabase({ url: withDatabase(serverUrl, building) });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    await adminQuery(serverUrl, `ALTER DATABASE ${building} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    await adminQuery(serverUrl, `ALTER DATABASE ${building} RENAME TO ${name}`);
  } catch (error) {
    await adminQuery(serverUrl, `ALTER DATABASE ${building} WITH IS_TEMPLATE false`).catch(() => undefined);
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    // Another process made it first: use theirs. Anything else (no pgvector) is the test's error.
    if ((await adminRows(serverUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 0) throw error;
  }
  return name;
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  await adminRows(url, sql);
}

async function adminRows<T = unknown>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
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
    // Initialised, not migrated (the CLI migrates): the first child skips PGlite's initdb.
    if (!existsSync(dataDir)) cpSync(await pgliteTemplate(false), dataDir, { recursive: true });
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
