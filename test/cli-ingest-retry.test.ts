/**
 * `dhr ingest --url` against a real `dhr serve` that is stopped and started again on the same
 * port: the command keeps asking with backoff (--retry-for), follows its durable job to the end
 * once the server is back, and when the server stays away it gives up naming the jobs and the
 * command that follows them.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { packageRoot } from '../src/paths';
import { createApiKey } from '../src/store/keys';
import { openMigratedDatabase } from '../src/store/open';
import { cliEntry } from './helpers/cli-entry';
import { cliStore, dhr } from './helpers/cli';
import { startServe, type ServeProcess } from './helpers/serve';

/** A port free now, for a server that must come back at the same URL. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const until = async (what: string, ok: () => boolean, seen: () => string, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}; stderr: ${seen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('dhr ingest --url while the server restarts', () => {
  let work: string;
  let store: Awaited<ReturnType<typeof cliStore>>;
  let serve: ServeProcess | undefined;
  let adminKey: string;
  let port: number;
  let cleanup = () => {};
  // JOB_WORKERS=0 first: the job stays queued while the command follows it, so the restart
  // always falls in the middle; the second server's worker writes it.
  const env = (workers: string) => ({ ...store.env, ENCODER_THREADS: '1', JOB_WORKERS: workers, JOB_POLL_MS: '100', EMBED_ON_INGEST: 'false' });
  const stop = async () => {
    serve!.child.kill('SIGTERM');
    expect((await serve!.exited).code).toBe(0);
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'dhr-ingest-retry-'));
    store = await cliStore(work);
    const db = await openMigratedDatabase(loadConfig(store.env));
    try {
      adminKey = (await createApiKey(db, { role: 'admin', name: 'retry test' })).key;
    } finally {
      await db.close();
    }
    port = await freePort();
    const dir = join(work, 'notes');
    mkdirSync(dir);
    for (let i = 0; i < 6; i++) writeFileSync(join(dir, `n${i}.md`), `# tide note ${i}\n\nThe harbour floods at spring tide ${i}.\n`);
  }, 120_000);
  afterAll(async () => {
    cleanup();
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    await store?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('follows its job across a stop and a start of the server, then gives up naming the job when the server stays away', async () => {
    serve = await startServe(env('0'), 110_000, { port });
    const url = serve.url;
    const root = packageRoot();
    const child = spawn(process.execPath, [...cliEntry(root), 'ingest', join(work, 'notes'), '--url', url, '--retry-for', '100'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DHR_API_KEY: adminKey },
    });
    cleanup = () => child.kill('SIGKILL');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until(
      'the job was queued',
      () => /ingest job \d+: 6 documents queued/.test(stderr),
      () => stderr,
    );
    const id = /ingest job (\d+): 6 documents queued/.exec(stderr)![1];

    await stop();
    await until(
      'the command noticed the server had gone',
      () => /; trying again for up to 100 s \(--retry-for\)/.test(stderr),
      () => stderr,
    );
    // Back after 1.5 s, on the same port: the command was not given up.
    await new Promise((r) => setTimeout(r, 1500));
    expect(child.exitCode).toBeNull();
    serve = await startServe(env('1'), 110_000, { port });
    expect(serve.url).toBe(url);
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/the server at \S+ answers again \(after \d+\.\d s\)/);
    expect(stdout).toMatch(new RegExp(`ingested 6 documents on .*: 6 created, 0 updated, 0 unchanged, 0 failed; \\d+ passages written \\(job ${id}\\)`));

    // Gone for longer than --retry-for: following the job gives up and says how to follow it later.
    await stop();
    const followed = await dhr(['ingest', '--url', url, '--job', id, '--retry-for', '1'], { DHR_API_KEY: adminKey });
    expect(followed.code).toBe(1);
    expect(followed.stderr).toMatch(new RegExp(`gave up on the server at ${url} after 1 s: cannot reach the server .*ECONNREFUSED`));
    expect(followed.stderr).toContain(
      `ingest job ${id} is stored on the server and goes on when it is back. Follow it with:\n  dhr ingest --url ${url} --job ${id}\n`,
    );
    // Nothing sent yet: it says so, and what to run.
    const unsent = await dhr(['ingest', join(work, 'notes'), '--url', url, '--retry-for', '1'], { DHR_API_KEY: adminKey });
    expect(unsent.code).toBe(1);
    expect(unsent.stderr).toMatch(/gave up on the server at .* after 1 s: .*; 6 documents were not sent\. Run the same command again once it answers/);
  }, 300_000);
});
