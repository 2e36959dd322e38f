/**
 * The embedded store's data folder is one process's: while `dhr serve` has it open, a second
 * process (`dhr migrate`) is refused with a message that names the server and says what to do; a
 * lock left by a process killed with SIGKILL is taken over by the next one. Real
 * processes, a real PGlite folder (whatever DATABASE_URL says: the lock is the embedded store's).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '../src/errors';
import { dataFolderHolder, LOCK_NAME, lockDataFolder, recordServer } from '../src/store/data-lock';
import { PgliteDatabase } from '../src/store/pglite';
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

    const second = await dhr(['migrate'], env);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain(`dhr migrate: the store in ${dataDir} is held by the server at ${serve.url} (pid ${serve.child.pid})`);
    expect(second.stderr).toMatch(/stop the server \(Ctrl-C\) and run it again/);

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
    // The dead server's address is still recorded, and ignored with its lock.
    expect(JSON.parse(readFileSync(`${lock}.owner`, 'utf8'))).toEqual({ pid: serve.child.pid, host: hostname(), server: { url: serve.url } });

    const after = await dhr(['stats'], env);
    expect(after.stderr).not.toMatch(/in use by|held by/);
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
      await expect(lockDataFolder(dir)).rejects.toMatchObject({
        code: ErrorCode.CONFLICT,
        argument: 'DATA_DIR',
        message: expect.stringContaining(`in use by another dhr process (pid ${process.pid})`),
      });
      await release();
      expect(existsSync(join(dir, LOCK_NAME))).toBe(false);
      const again = await lockDataFolder(dir);
      await again();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("opens a folder given as a symbolic link: the store is the folder it names, and its lock is that folder's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-lock-link-'));
    const real = join(dir, 'real');
    const link = join(dir, 'link');
    try {
      mkdirSync(real);
      symlinkSync(real, link);
      const viaLink = await PgliteDatabase.open({ dataDir: link });
      try {
        await viaLink.exec('CREATE TABLE written_through_link (x int); INSERT INTO written_through_link VALUES (7)');
        // The same folder by its own name is held by the open through the link.
        await expect(lockDataFolder(real)).rejects.toMatchObject({ code: ErrorCode.CONFLICT });
      } finally {
        await viaLink.close();
      }
      const viaReal = await PgliteDatabase.open({ dataDir: real });
      try {
        expect(await viaReal.query('SELECT x FROM written_through_link')).toEqual([{ x: 7 }]);
      } finally {
        await viaReal.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('says what the holding server is doing: starting, or where it listens (taken back at shutdown)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-lock-server-'));
    try {
      expect(dataFolderHolder(dir)).toBeUndefined();
      const release = await lockDataFolder(dir);
      const me = { pid: process.pid, host: hostname() };
      expect(dataFolderHolder(dir)).toEqual(me);
      recordServer(dir, 'starting');
      expect(dataFolderHolder(dir)).toEqual({ ...me, server: 'starting' });
      await expect(lockDataFolder(dir)).rejects.toThrow(`in use by the dhr server (pid ${process.pid}), which is still starting`);
      const forget = recordServer(dir, { url: 'http://127.0.0.1:4999/' });
      expect(dataFolderHolder(dir)).toEqual({ ...me, server: { url: 'http://127.0.0.1:4999/' } });
      await expect(lockDataFolder(dir)).rejects.toThrow(/in use by the dhr server at http:\/\/127\.0\.0\.1:4999\/ .*`--url http:\/\/127\.0\.0\.1:4999\/`/);
      forget();
      expect(dataFolderHolder(dir)).toEqual(me);
      await release();
      expect(dataFolderHolder(dir)).toBeUndefined();
      expect(() => recordServer(dir, 'starting')).toThrow(/does not hold/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
