/**
 * A store that refuses writes, made with real file-system faults (no mocks): the data folder on a
 * small tmpfs, filled to the last byte or bind-mounted read-only over itself; on PostgreSQL a
 * database whose tablespace lives on such a tmpfs, and default_transaction_read_only. An ingest
 * must fail typed (STORAGE_UNAVAILABLE, HTTP 503, Retry-After; no path in the message), logged
 * once at error level with the path; retrieval keeps answering; /readyz says which fault; once
 * the fault is gone an ingest succeeds and /readyz is ok again, without a restart. And /readyz
 * tells the truth while every pooled connection is busy.
 *
 * Mounting needs root, as CI runs: elsewhere these cases are skipped, saying so.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { BULK_FROM_DOCUMENTS } from '../src/pipeline/ingest';
import { startServer } from '../src/server';
import type { Database } from '../src/store/db';
import type { ConnectionLostFields } from '../src/store/faults';
import { createApiKey } from '../src/store/keys';
import { migrate } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { PostgresDatabase } from '../src/store/postgres';
import { withDatabase } from './helpers/database';
import { captureLog, type LogLine } from './helpers/log-capture';
import type { Logger } from '../src/observability/logger';

const root = process.getuid?.() === 0;
const serverUrl = process.env.DATABASE_URL;
/** The PGlite leg tests the embedded folder, the PostgreSQL leg the server's tablespace: each once per CI run. */
const onPglite = root && !serverUrl ? describe : describe.skip;
const onPostgres = root && serverUrl ? describe : describe.skip;
const skipNote = root ? '' : ' (skipped: mounting a tmpfs needs root)';

const INGEST = `mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created failed outcomes { status message } } }`;
const RETRIEVE = `{ retrieve(question: "harbour river", k1: 10, k2: 5, mode: LEXICAL) { passages { passage { text } } } }`;

function sh(command: string, ...args: string[]): void {
  execFileSync(command, args, { stdio: 'pipe' });
}

/** A tmpfs of this size at a fresh directory; returns it and its unmount. */
function tmpfs(size: string): { dir: string; unmount: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'dhr-storage-'));
  sh('mount', '-t', 'tmpfs', '-o', `size=${size},mode=755`, 'tmpfs', dir);
  return {
    dir,
    unmount: () => {
      // Lazily, so a file still open (a failed test) does not leave the mount behind.
      for (let i = 0; i < 3; i++) {
        try {
          sh('umount', '-l', dir);
        } catch {
          break;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the file system holding dir to the last block (dd stops at ENOSPC). */
function fill(dir: string): string {
  const filler = join(dir, 'filler');
  try {
    sh('dd', 'if=/dev/zero', `of=${filler}`, 'bs=64k');
  } catch {
    // "No space left on device": what was asked for.
  }
  return filler;
}

interface Served {
  url: string;
  key: string;
  logs: LogLine[];
  log: Logger;
  post(query: string, variables?: unknown, key?: string): Promise<{ status: number; retryAfter: string | null; body: any }>;
  readyz(): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

async function serve(db: Database): Promise<Served> {
  const log = captureLog();
  const key = (await createApiKey(db, { role: 'admin', name: 'storage' })).key;
  // No job workers of the server's own: the worker case runs its own, alone on the two-connection
  // pool, and counts only its own statements (a CI run under load once hung with both polling).
  const env = { PORT: '0', RATE_LIMIT_QUERIES: '0', RATE_LIMIT_MUTATIONS: '0', JOB_WORKERS: '0' };
  const { url, stop, log: logger } = await startServer(db, loadConfig(env), undefined, { logDestination: log.destination });
  return {
    url,
    key,
    logs: log.lines,
    log: logger,
    async post(query, variables, asKey = key) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${asKey}` },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
    },
    async readyz() {
      const response = await fetch(new URL('/readyz', url));
      return { status: response.status, body: await response.json() };
    },
    stop,
  };
}

/** Waits for a condition, failing with what it saw after 20 s rather than at jest's timeout with nothing. */
async function until(done: () => boolean, saw: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${saw()}`);
    await sleep(10);
  }
}

const doc = (key: string) => [{ key, title: `Harbour ${key}`, text: `The river ${key} reaches the sea near the old harbour after a long journey.` }];

/**
 * The checks both stores share, for one spell of a fault: `location` is what the log must name,
 * `reader` a key never used yet (its last-used stamp is a write the store will refuse).
 */
async function refusesWritesThenRecovers(
  s: Served,
  spell: { reason: 'read-only' | 'full'; location: string; reader: string; recover: () => Promise<void>; readsMayFail?: boolean },
) {
  const { reason, location, reader, recover, readsMayFail = false } = spell;
  // Error lines but the access log's (one per request, at the level of its status).
  const errorLines = () => s.logs.filter((l) => l.level >= 50 && l.msg !== 'request');
  const errorsBefore = errorLines().length;
  const refused = await s.post(INGEST, { d: doc(`${reason}-refused`) });
  expect(refused.status).toBe(503);
  expect(refused.retryAfter).toBe('30');
  expect(refused.body.errors).toHaveLength(1);
  const [error] = refused.body.errors;
  expect(error.extensions).toMatchObject({ code: 'STORAGE_UNAVAILABLE', storage: reason });
  expect(error.message).toMatch(reason === 'full' ? /the store is full/ : /the store is read-only/);
  // The cause, never a path (nor the driver's text).
  expect(error.message).not.toMatch(/\/|base\/|pg_tblspc|dhr-storage|No space left|Read-only file system/);

  // Reads go on, with a key whose last-used stamp is due (a write the store refuses). PGlite's
  // unwritable folder is the exception: PostgreSQL opens data files read-write, so a read that
  // needs a file not open yet is refused too; typed all the same, never a 500.
  const read = await s.post(RETRIEVE, undefined, reader);
  if (readsMayFail && read.status !== 200) {
    expect([read.status, read.body.errors[0].extensions.code]).toEqual([503, 'STORAGE_UNAVAILABLE']);
  } else {
    expect([read.status, read.body.errors]).toEqual([200, undefined]);
    expect(read.body.data.retrieve.passages.length).toBeGreaterThan(0);
  }

  const degraded = await s.readyz();
  expect(degraded.status).toBe(200);
  expect(degraded.body).toMatchObject({ status: 'degraded', database: 'ok', storage: reason });

  // Refused again, now through the bulk path (BULK_FROM_DOCUMENTS): still typed, not logged again.
  const many = Array.from({ length: BULK_FROM_DOCUMENTS }, (_, i) => doc(`${reason}-again-${i}`)[0]);
  const again = await s.post(INGEST, { d: many });
  expect([again.status, again.body.errors?.[0]?.extensions?.code]).toEqual([503, 'STORAGE_UNAVAILABLE']);
  const errors = errorLines().slice(errorsBefore);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({ storage: reason, database: location });
  expect(String(errors[0].cause)).toMatch(reason === 'full' ? /No space left on device|disk/i : /read-only|Read-only file system/i);

  await recover();
  const accepted = await s.post(INGEST, { d: doc(`${reason}-accepted`) });
  expect([accepted.status, accepted.body]).toEqual([
    200,
    { data: { ingestDocuments: { created: 1, failed: 0, outcomes: [{ status: 'CREATED', message: null }] } } },
  ]);
  const ready = await s.readyz();
  expect([ready.status, ready.body.status, ready.body.storage]).toEqual([200, 'ready', 'ok']);
}

onPglite(`PGlite: a data folder that turns full or read-only${skipNote}`, () => {
  let mount: ReturnType<typeof tmpfs>;
  let dataDir: string;
  let db: PgliteDatabase | undefined;
  let s: Served;
  /** A reader key made while the store is writable, first used during the fault. */
  let reader: string;

  beforeAll(async () => {
    // A fresh PGlite folder holds about 40 MB (a 16 MB WAL segment among it).
    mount = tmpfs('96m');
    dataDir = join(mount.dir, 'data');
    db = await PgliteDatabase.open({ dataDir });
    await migrate(db);
    s = await serve(db);
    expect((await s.post(INGEST, { d: doc('seed') })).body.data.ingestDocuments.created).toBe(1);
    // Every table's free-space map made now, while the folder is writable. A write refused while the
    // folder is read-only may be the creation of such a file (a heap that just filled its page), and
    // PGlite's file system (Emscripten's) then remembers the file it failed to create: the next
    // create of it fails with "File exists" until the process restarts (docs/operations.md,
    // read-only storage; seen under load in CI, 1 run in 3 here). That is a limitation of the
    // embedded store, not what this test checks.
    await db.query('VACUUM');
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await db?.close().catch(() => undefined);
    mount?.unmount();
  });

  beforeEach(async () => {
    reader = (await createApiKey(db!, { role: 'reader', name: 'reader' })).key;
  });

  it('a full disk: STORAGE_UNAVAILABLE (full), reads go on, /readyz degraded; space freed, writes resume', async () => {
    const filler = fill(mount.dir);
    await refusesWritesThenRecovers(s, { reason: 'full', location: dataDir, reader, recover: async () => rmSync(filler) });
  });

  it('a read-only folder: STORAGE_UNAVAILABLE (read-only), /readyz degraded; writable again, writes resume', async () => {
    // Remounting the tmpfs itself is refused while PGlite holds files open for writing; a read-only
    // bind mount over the folder refuses every file opened from now on, as `chmod a-w` does for a non-root user.
    sh('mount', '--bind', dataDir, dataDir);
    let bound = true;
    try {
      sh('mount', '-o', 'remount,bind,ro', dataDir);
      const recover = async () => {
        sh('umount', dataDir);
        bound = false;
      };
      await refusesWritesThenRecovers(s, { reason: 'read-only', location: dataDir, reader, recover, readsMayFail: true });
    } finally {
      if (bound) sh('umount', '-l', dataDir);
    }
  });
});

onPostgres(`PostgreSQL: a tablespace that fills up, a database turned read-only, a busy pool${skipNote}`, () => {
  const name = `dhr_storage_${process.pid}`;
  let mount: ReturnType<typeof tmpfs>;
  let db: PostgresDatabase | undefined;
  let s: Served;
  let reader: string;
  const lost: { message: string; fields?: ConnectionLostFields }[] = [];
  const admin = async (sql: string, params: unknown[] = []) => {
    const client = new Client({ connectionString: serverUrl });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows;
    } finally {
      await client.end();
    }
  };
  /** Ends the server's connections to the database (new ones get its new settings) and waits until the pool has let them go. */
  const reconnect = async () => {
    await admin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
    await until(
      () => db!.poolUsage().total === 0,
      () => `the pool still holds ${JSON.stringify(db!.poolUsage())}`,
    );
  };

  beforeAll(async () => {
    mount = tmpfs('48m');
    const location = join(mount.dir, 'ts');
    mkdirSync(location);
    sh('chown', 'postgres:postgres', location);
    await admin(`CREATE TABLESPACE ${name} LOCATION '${location}'`);
    await admin(`CREATE DATABASE ${name} TABLESPACE ${name}`);
    // Two connections, so the busy-pool case can hold them all.
    db = new PostgresDatabase({
      url: withDatabase(serverUrl!, name),
      maxConnections: 2,
      log: (message: string, fields?: ConnectionLostFields) => lost.push({ message, fields }),
    });
    await migrate(db);
    s = await serve(db);
    expect((await s.post(INGEST, { d: doc('seed') })).body.data.ingestDocuments.created).toBe(1);
  }, 60_000);

  afterAll(async () => {
    await s?.stop();
    await db?.close().catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin(`DROP TABLESPACE IF EXISTS ${name}`).catch(() => undefined);
    mount?.unmount();
  });

  beforeEach(async () => {
    reader = (await createApiKey(db!, { role: 'reader', name: 'reader' })).key;
  });

  it('a full tablespace: STORAGE_UNAVAILABLE (full), reads go on, /readyz degraded; space freed, writes resume', async () => {
    const filler = fill(mount.dir);
    await refusesWritesThenRecovers(s, { reason: 'full', location: db!.location, reader, recover: async () => rmSync(filler) });
  });

  it('a read-only database: STORAGE_UNAVAILABLE (read-only); writable again, writes resume; dropped connections are logged with fields', async () => {
    await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    await reconnect();
    const recover = async () => {
      await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      await reconnect();
    };
    await refusesWritesThenRecovers(s, { reason: 'read-only', location: db!.location, reader, recover });
    // The pool's idle connections were terminated: logged structured (57P01), at most once a second.
    expect(lost.length).toBeGreaterThan(0);
    expect(lost[0].message).toBe('database connection lost');
    expect(lost[0].fields).toMatchObject({ code: '57P01' });
    expect(lost[0].fields?.err).toBeInstanceOf(Error);
  });

  it('a job worker meeting a read-only database logs it once at error level, not at info each poll', async () => {
    await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    const writable = async () => {
      await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      await reconnect();
    };
    let before: number;
    try {
      await reconnect();
      const texts: string[] = [];
      const worker = new JobWorker(db!, new ModelRegistry(db!), { batchSize: 4, pollMs: 10, log: (m) => texts.push(m), logger: s.log });
      before = s.logs.length;
      const abort = new AbortController();
      const running = worker.run({ signal: abort.signal });
      // Several polls refused (each sends one statement first), however long they take.
      const from = db!.statements.count;
      await until(
        () => db!.statements.count >= from + 4,
        () => `the worker sent ${db!.statements.count - from} statements; logs: ${JSON.stringify(s.logs.slice(before))}`,
      );
      abort.abort();
      let stopped = false;
      void running.then(() => (stopped = true));
      await until(
        () => stopped,
        () => 'the worker did not stop when aborted',
      );
      const lines = s.logs.slice(before);
      expect(lines.filter((l) => l.level >= 50)).toEqual([expect.objectContaining({ storage: 'read-only', code: '25006', database: db!.location })]);
      expect(texts).toEqual([]);
    } catch (error) {
      // The next cases need a writable store whatever failed here.
      await writable();
      throw error;
    }
    // Writable again; a write ends the spell, so the next case starts from a healthy store.
    await writable();
    expect((await s.post(INGEST, { d: doc('after-worker') })).body.data.ingestDocuments.created).toBe(1);
    expect(s.logs.slice(before).filter((l) => l.msg === 'the store takes writes again')).toHaveLength(1);
  });

  it('/readyz answers database ok, reporting the pool busy, while every pooled connection is held', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const held = [db!.transaction(() => gate), db!.transaction(() => gate)];
    try {
      while (db!.poolUsage().idle > 0 || db!.poolUsage().total < 2) await sleep(10);
      const ready = await s.readyz();
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ready', database: 'ok', storage: 'ok', pool: { busy: 2, idle: 0, max: 2 } });
    } finally {
      open();
      await Promise.all(held);
    }
  });
});
