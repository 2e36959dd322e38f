/**
 * PgliteDatabase.close() during work (server shutdown with an ingest still running): the
 * transaction in flight finishes whole, statements issued after close began are refused (a
 * statement reaching PGlite while it closes would never return and keep the thread busy), and
 * the data folder's lock is released last. Real PGlite in a temporary folder.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LOCK_NAME } from '../src/store/data-lock';
import { PgliteDatabase } from '../src/store/pglite';

describe('PgliteDatabase.close during work', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'dhr-pglite-close-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('lets the transaction in flight commit, refuses later statements, then releases the lock', async () => {
    const dataDir = join(work, 'data');
    const db = await PgliteDatabase.open({ dataDir });
    await db.exec('CREATE TABLE t (x int)');
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (1)');
      inside();
      await sleep(50);
      await tx.query('INSERT INTO t VALUES (2)');
      return 'committed';
    });
    await begun;
    const closing = db.close();
    await expect(db.query('SELECT 1')).rejects.toMatchObject({ code: '57P01', message: expect.stringMatching(/database is closed/) });
    expect(existsSync(join(dataDir, LOCK_NAME))).toBe(true);
    expect(await transaction).toBe('committed');
    await closing;
    expect(existsSync(join(dataDir, LOCK_NAME))).toBe(false);

    const again = await PgliteDatabase.open({ dataDir });
    try {
      expect(await again.query('SELECT x FROM t ORDER BY x')).toEqual([{ x: 1 }, { x: 2 }]);
    } finally {
      await again.close();
    }
  });
});
