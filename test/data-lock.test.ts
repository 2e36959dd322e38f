/**
 * The embedded store's data folder is one process's: while `dhr serve` has it open, a second
 * process (`dhr stats`) is refused with a message that names the folder and says what to do; a
 * lock left by a process killed with SIGKILL is taken over once it has gone stale. Real
 * processes, a real PGlite folder (whatever DATABASE_URL says: the lock is the embedded store's).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOCK_NAME, LOCK_STALE_MS } from '../src/store/data-lock';
import { dhr } from './helpers/cli';
import { startServe, type ServeProcess } from './helpers/serve';

describe('data folder lock', () => {
  let work: string;
  let serve: ServeProcess | undefined;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'dhr-lock-'));
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses a second process while the server runs, and lets a new one in after the server is killed', async () => {
    const dataDir = join(work, 'data');
    const env = { DATA_DIR: dataDir, ENCODER_THREADS: '1' };
    serve = await startServe(env);
    const lock = join(dataDir, LOCK_NAME);
    expect(existsSync(lock)).toBe(true);

    const second = await dhr(['stats'], env);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain(`the data folder ${dataDir} is in use by another dhr process`);
    expect(second.stderr).toMatch(/Stop that process first .*`--url <server address>`/);

    // The server still serves: the refused process changed nothing.
    const served = await fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ stats { documents } }' }),
    });
    expect(await served.json()).toEqual({ data: { stats: { documents: 0 } } });

    // SIGKILL: nothing runs on exit, the lock stays behind, and stops being refreshed.
    serve.child.kill('SIGKILL');
    expect(await serve.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(lock)).toBe(true);
    // Wait until the lock is older than the stale threshold (the documented takeover delay).
    const age = Date.now() - statSync(lock).mtimeMs;
    await sleep(Math.max(0, LOCK_STALE_MS - age) + 1000);

    const after = await dhr(['stats'], env);
    expect(after.stderr).not.toMatch(/in use by another dhr process/);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ documents: 0 });
    // Released on a normal exit.
    expect(existsSync(lock)).toBe(false);
  }, 240_000);
});
