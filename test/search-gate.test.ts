/**
 * Search statements' admission (src/store/search-gate.ts): at most half the pool runs searches at
 * once, so readers that keep every search busy leave connections for writes; a search that waits
 * past the pool's wait is OVERLOADED, as a pool wait is; an ingest's writes may take the half the
 * searches leave. Timings live in `npm run bench:writer-fairness`.
 */
import { loadConfig } from '../src/config';
import { createContext } from '../src/graphql/context';
import { classifyDatabaseError } from '../src/store/faults';
import { PostgresDatabase } from '../src/store/postgres';
import { defaultSearchLimit, SearchGate } from '../src/store/search-gate';
import { createTestDatabase, type TestDatabase } from './helpers/database';

const tick = () => new Promise((r) => setImmediate(r));

describe('SearchGate', () => {
  it('runs at most its limit at once and the rest in the order they came', async () => {
    const gate = new SearchGate(2, 10_000);
    const releases: (() => void)[] = [];
    const started: number[] = [];
    const runs = [0, 1, 2, 3].map((i) =>
      gate.run(() => {
        started.push(i);
        return new Promise<number>((r) => releases.push(() => r(i)));
      }),
    );
    await tick();
    expect(started).toEqual([0, 1]);
    expect(gate.waiting).toBe(2);
    releases[1]();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    releases[0]();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    releases[2]();
    releases[3]();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2, 3]);
    expect(gate.waiting).toBe(0);
  });

  it('hands the turn on when a search fails', async () => {
    const gate = new SearchGate(1, 10_000);
    await expect(gate.run(() => Promise.reject(new Error('bad statement')))).rejects.toThrow('bad statement');
    await expect(gate.run(async () => 'next')).resolves.toBe('next');
  });

  it('refuses a search that waited longer than the pool would, as busy (OVERLOADED), and runs none for it', async () => {
    const gate = new SearchGate(1, 50);
    let release!: () => void;
    const holder = gate.run(() => new Promise<void>((r) => (release = r)));
    let ran = false;
    const error = await gate
      .run(async () => {
        ran = true;
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PoolBusyError', message: expect.stringMatching(/^the server is busy: 1 searches/) });
    expect(classifyDatabaseError(error)).toBe('busy');
    expect(ran).toBe(false);
    expect(gate.waiting).toBe(0);
    release();
    await holder;
    await expect(gate.run(async () => 'after')).resolves.toBe('after');
  });

  it('takes half the pool by default, at least one', () => {
    expect([1, 2, 3, 4, 10, 32].map(defaultSearchLimit)).toEqual([1, 1, 1, 2, 5, 16]);
  });
});

(process.env.DATABASE_URL ? describe : describe.skip)('search statements beside writes (PostgreSQL)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.drop());

  it('leaves connections for other statements while searches fill their share of the pool', async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 4 });
    try {
      let searchesDone = 0;
      let busyPeak = 0;
      const watch = setInterval(() => {
        const u = db.poolUsage();
        busyPeak = Math.max(busyPeak, u.total - u.idle);
      }, 5);
      // Eight readers' searches: two run, six wait without a connection.
      const searches = Array.from({ length: 8 }, () => db.queryWithSettings({}, 'SELECT pg_sleep(0.2)').then(() => searchesDone++));
      await new Promise((r) => setTimeout(r, 20));
      await db.transaction(async (tx) => tx.query('SELECT 1'));
      await db.query('SELECT 1');
      const doneWhenWritten = searchesDone;
      await Promise.all(searches);
      clearInterval(watch);
      // Not queued behind the searches (the pool alone would have given them every connection, and the writes their leftovers).
      expect(doneWhenWritten).toBe(0);
      expect(busyPeak).toBeLessThanOrEqual(3);
    } finally {
      await db.close();
    }
  });

  it("gives an operation's writes the half of the pool that searches leave, its other statements their usual share", async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 4 });
    try {
      const config = { ...loadConfig({}), dbPoolMax: 4, dbConnectionsPerRequest: 1 };
      const ctx = createContext(db, config);
      const peak = (d: unknown) => (d as { shareUsage: { peak: number } }).shareUsage.peak;
      await Promise.all(Array.from({ length: 4 }, () => ctx.writes.transaction((tx) => tx.query('SELECT pg_sleep(0.05)'))));
      await Promise.all(Array.from({ length: 4 }, () => ctx.db.query('SELECT pg_sleep(0.02)')));
      expect(peak(ctx.writes)).toBe(2);
      expect(peak(ctx.db)).toBe(1);
    } finally {
      await db.close();
    }
  });
});
