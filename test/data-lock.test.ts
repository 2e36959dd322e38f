/**
 * The embedded store's data folder is one process's: while `dhr serve` has it open, a second
 * process (`dhr stats`) is refused with a message that names the folder and says what to do; a
 * lock left by a process killed with SIGKILL is taken over by the next one. Real
 * processes, a real PGlite folder (whatever DATABASE_URL says: the lock is the embedded store's).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../src/errors';
import { LOCK_NAME, lockDataFolder } from '../src/store/data-lock';
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

    // SIGKILL: nothing runs on exit and the lock stays behind; its owner (pid, host) is gone, so
    // the next process takes it over at once, without waiting for it to go stale.
    serve.child.kill('SIGKILL');
    expect(await serve.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(lock)).toBe(true);
    expect(JSON.parse(readFileSync(`${lock}.owner`, 'utf8'))).toEqual({ pid: serve.child.pid, host: hostname() });

    const after = await dhr(['stats'], env);
    expect(after.stderr).not.toMatch(/in use by another dhr process/);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ documents: 0 });
    // Released on a normal exit.
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(`${lock}.owner`)).toBe(false);
  }, 240_000);
});

describe('data folder lock within one process', () => {
  it('refuses a second open of a folder this process holds (its own pid is no stale owner), and allows it after release', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-lock-self-'));
    try {
      const release = await lockDataFolder(dir);
      await expect(lockDataFolder(dir)).rejects.toMatchObject({ code: ErrorCode.CONFLICT, argument: 'DATA_DIR' });
      await release();
      expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
      const again = await lockDataFolder(dir);
      await again();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
