/**
 * Graceful shutdown of the real `dhr serve` process: on SIGTERM it stops accepting connections,
 * lets the requests in flight finish (within SHUTDOWN_GRACE_MS; past it their connections are
 * cut), and exits 0. An ingest mutation's embedding and the background embedding at start stop
 * between batches, leaving whole documents recorded as pending, which the next start finishes.
 * A second signal exits 1 at once. The embedded store's lock is gone once the process has exited.
 *
 * "In flight" is made deterministic without timing: a request sent with `Expect: 100-continue`
 * gets "100 Continue" only once the server has parsed its headers and is serving it; the test
 * holds back the body until after SIGTERM. Embedding is seen in progress through the store's
 * counts (an ingest) or the progress line on stderr (at start), one passage per batch.
 */
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config';
import { LOCK_NAME } from '../src/store/data-lock';
import { createApiKey } from '../src/store/keys';
import { openMigratedDatabase } from '../src/store/open';
import { cliStore } from './helpers/cli';
import { spawnServe, startServe, type ServeProcess, type SpawnedServe } from './helpers/serve';

/** Polls until `check` holds (generous bound: a failure names what never happened). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`never happened: ${what}`);
}

const DOCUMENTS = 20;
/** Each document: three sections, one passage each. */
const corpus = Array.from({ length: DOCUMENTS }, (_, i) => ({
  key: `doc-${i}`,
  title: `Harbour ${i}`,
  sections: ['Trade', 'Ships', 'Weather'].map((title) => ({
    title,
    text: `${title} at harbour ${i}: the quay, the cranes and the tides of port number ${i}.`,
  })),
}));
const INGEST = 'mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created embedded { documents passages } } }';
const STATS = '{ stats { documents passages pending { unembeddedDocuments unembeddedPassages unindexedPassages } } }';

interface Stats {
  documents: number;
  passages: number;
  pending: { unembeddedDocuments: number; unembeddedPassages: number; unindexedPassages: number };
}

/** A POST whose headers are sent now and whose body waits for `finish`. */
function heldRequest(url: string, query: string) {
  const body = JSON.stringify({ query });
  let req!: ClientRequest;
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = request(url, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
    });
    req.once('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  answered.catch(() => undefined);
  const serving = new Promise<void>((resolve) => req.once('continue', () => resolve()));
  req.flushHeaders();
  return { serving, answered, finish: () => req.end(body) };
}

/** Whether a new TCP connection to the server's port is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('dhr serve on SIGTERM', () => {
  let work: string;
  let store: Awaited<ReturnType<typeof cliStore>>;
  let serve: ServeProcess | SpawnedServe | undefined;
  let adminKey: string;

  const post = async (url: string, query: string, variables?: Record<string, unknown>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: (await response.json()) as { data?: any; errors?: unknown[] } };
  };
  const stats = async (url: string): Promise<Stats> => (await post(url, STATS)).body.data.stats;
  /** The store as a new process finds it once the server has exited (PGlite: the lock must be free). */
  const inStore = async <T>(read: (db: Awaited<ReturnType<typeof openMigratedDatabase>>) => Promise<T>): Promise<T> => {
    const db = await openMigratedDatabase(loadConfig(store.env));
    try {
      return await read(db);
    } finally {
      await db.close();
    }
  };
  const lockHeld = () => 'DATA_DIR' in store.env && existsSync(join(store.env.DATA_DIR, LOCK_NAME));

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'dhr-shutdown-'));
    store = await cliStore(work);
    adminKey = (await inStore((db) => createApiKey(db, { role: 'admin', name: 'shutdown test' }))).key;
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    await store.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('stops accepting, finishes the request in flight, cuts one that outlasts the grace period, exits 0', async () => {
    serve = await startServe({ ...store.env, SHUTDOWN_GRACE_MS: '8000', JOB_POLL_MS: '200' });
    const { url } = serve;
    // Served before the signal: the server works.
    const before = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ stats { documents } }' }),
    });
    expect(await before.json()).toEqual({ data: { stats: { documents: 0 } } });

    const finishing = heldRequest(url, '{ stats { documents passages } }');
    const stalled = heldRequest(url, '{ stats { sections } }');
    await Promise.all([finishing.serving, stalled.serving]);

    serve.child.kill('SIGTERM');
    // The listener closes first: poll until a new connection is refused (both requests still open).
    let closed = false;
    for (let i = 0; i < 100 && !closed; i++) {
      closed = await refused(url);
      if (!closed) await sleep(100);
    }
    expect(closed).toBe(true);
    expect(serve.child.exitCode).toBeNull();

    // The request in flight completes normally after the signal.
    finishing.finish();
    expect(await finishing.answered).toEqual({ status: 200, body: JSON.stringify({ data: { stats: { documents: 0, passages: 0 } } }) + '\n' });

    // The other never sends its body: its connection is cut once SHUTDOWN_GRACE_MS has passed, and the process exits 0.
    await expect(stalled.answered).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(serve.stderr()).toMatch(/SIGTERM: shutting down \(in-flight requests get up to 8000 ms; the exit is forced after 18000 ms\)/);
    expect(serve.stderr()).toMatch(/\bstopped\n/);
  }, 180_000);

  it('an ingest mutation in its embed stage stops between batches: answered, exit 0, its documents whole and still pending', async () => {
    serve = await startServe({ ...store.env, EMBED_BATCH_SIZE: '1', SHUTDOWN_GRACE_MS: '60000' });
    const { url } = serve;
    const ingesting = post(url, INGEST, { docs: corpus });
    // In its embed stage: every document written, some embedded, most passages still to go (one per batch).
    await until('the ingest embeds', async () => {
      const s = await stats(url);
      return s.documents === DOCUMENTS && s.pending.unembeddedDocuments < DOCUMENTS;
    });
    serve.child.kill('SIGTERM');

    // The mutation answers (well within the grace): its embedding stopped after the batch in flight.
    const answered = await ingesting;
    expect(answered.status).toBe(200);
    const result = answered.body.data.ingestDocuments;
    expect(result.created).toBe(DOCUMENTS);
    expect(result.embedded.passages).toBeLessThan(DOCUMENTS * 3);
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(serve.stderr()).toMatch(/\bstopped\n/);
    expect(lockHeld()).toBe(false);

    // Consistent: every document whole (its three passages, indexed), the unembedded ones still recorded as pending.
    const [whole, recorded] = await inStore(async (db) => [
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages WHERE search IS NOT NULL GROUP BY document_id'),
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pending_documents'),
    ]);
    expect(whole).toEqual(Array.from({ length: DOCUMENTS }, () => ({ n: 3 })));
    expect(recorded[0].n).toBeGreaterThan(0);
  }, 180_000);

  it('the background embedding at start stops between batches on SIGTERM, exits 0, and leaves the rest pending', async () => {
    serve = await startServe({ ...store.env, EMBED_BATCH_SIZE: '1' });
    const before = (await stats(serve.url)).pending.unembeddedPassages;
    // Its progress line is printed after its first batch.
    await until('background embedding progresses', () => /embed (documents|passages) \[/.test(serve!.stderr()));
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(serve.stderr()).toMatch(/\bstopped\n/);
    expect(lockHeld()).toBe(false);
    const [left] = await inStore((db) => db.query<{ n: number }>('SELECT count(*)::int AS n FROM pending_documents'));
    expect(left.n).toBeGreaterThan(0);
    expect(before).toBeGreaterThan(0);
  }, 180_000);

  it('the next start finishes what was left; a second SIGTERM while the first shutdown waits exits 1 at once', async () => {
    serve = await startServe({ ...store.env, SHUTDOWN_GRACE_MS: '120000' });
    const { url } = serve;
    await until('the pending work is finished', async () => {
      const { pending } = await stats(url);
      return pending.unembeddedDocuments + pending.unembeddedPassages + pending.unindexedPassages === 0;
    });
    expect((await stats(url)).documents).toBe(DOCUMENTS);

    // The first shutdown waits for a request that never sends its body (for up to 120 s).
    const held = heldRequest(url, '{ stats { documents } }');
    await held.serving;
    serve.child.kill('SIGTERM');
    await until('the listener closes', () => refused(url));
    expect(serve.child.exitCode).toBeNull();
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 1, signal: null });
    expect(serve.stderr()).toMatch(/SIGTERM again: exiting without waiting/);
    await expect(held.answered).rejects.toThrow(/socket hang up|ECONNRESET/);

    // The folder opens again (the lock went with the process) and holds everything.
    expect(lockHeld()).toBe(false);
    const [{ n }] = await inStore((db) => db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents'));
    expect(n).toBe(DOCUMENTS);
  }, 180_000);

  it('a SIGTERM during startup stops it there: what was opened is closed, exit 0, never ready', async () => {
    const starting = spawnServe(store.env);
    serve = starting;
    // The database is open (its line is printed); the models load next.
    await until('the database is open', () => /^database: /m.test(starting.stderr()));
    starting.child.kill('SIGTERM');
    expect(await starting.exited).toEqual({ code: 0, signal: null });
    expect(starting.stdout()).not.toMatch(/ready at/);
    expect(starting.stderr()).toMatch(/SIGTERM: shutting down/);
    expect(starting.stderr()).toMatch(/\bstopped\n/);
    expect(lockHeld()).toBe(false);
  }, 180_000);
});
