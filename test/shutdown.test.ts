/**
 * Graceful shutdown of the real `dhr serve` process: on SIGTERM it stops accepting connections,
 * lets the requests in flight finish (within SHUTDOWN_GRACE_MS; past it their connections are
 * cut), and exits 0.
 *
 * "In flight" is made deterministic without timing: a request sent with `Expect: 100-continue`
 * gets "100 Continue" only once the server has parsed its headers and is serving it; the test
 * holds back the body until after SIGTERM.
 */
import { request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliStore } from './helpers/cli';
import { startServe, type ServeProcess } from './helpers/serve';

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
  let serve: ServeProcess | undefined;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'dhr-shutdown-'));
    store = await cliStore(work);
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
    const before = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ stats { documents } }' }) });
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
    expect(serve.stderr()).toMatch(/SIGTERM: shutting down \(in-flight requests get up to 8000 ms\)/);
    expect(serve.stderr()).toMatch(/\bstopped\n/);
  }, 180_000);
});
