/**
 * The read-replica settings and the WAL arithmetic behind the lag bound (the replicas themselves:
 * test/replica/, npm run test:replica).
 */
import { ConfigError, loadConfig } from '../src/config';
import { replicaName } from '../src/store/replicas';
import { WalHistory, formatLsn, parseLsn } from '../src/store/wal';

const PRIMARY = 'postgresql://app:secret@db-primary:5432/dhr';

describe('DATABASE_READ_URL', () => {
  test('a comma-separated list of replicas, with the lag bound and check interval', () => {
    const config = loadConfig({
      DATABASE_URL: PRIMARY,
      DATABASE_READ_URL: ' postgresql://app:secret@replica-1/dhr , postgres://app@replica-2:6432/dhr',
      REPLICA_MAX_LAG_MS: '2000',
      REPLICA_CHECK_MS: '100',
    });
    expect(config.readUrls).toEqual(['postgresql://app:secret@replica-1/dhr', 'postgres://app@replica-2:6432/dhr']);
    expect(config).toMatchObject({ replicaMaxLagMs: 2000, replicaCheckMs: 100 });
    expect(loadConfig({ DATABASE_URL: PRIMARY })).toMatchObject({ readUrls: [], replicaMaxLagMs: 5000, replicaCheckMs: 200 });
  });

  test('refused with the embedded store, naming both settings', () => {
    const attempt = () => loadConfig({ DATABASE_READ_URL: 'postgresql://replica/dhr' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/DATABASE_READ_URL needs DATABASE_URL/);
  });

  test.each([
    ['not a URL', 'replica-1:5432', /entry 1 of 1 is not a postgresql:\/\/ URL/],
    ['another scheme', 'postgresql://app:secret@r1/dhr,mysql://app:hunter2@r2/dhr', /entry 2 of 2 is not a postgresql:\/\/ URL/],
    ['an empty entry', 'postgresql://r1/dhr,', /entry 2 of 2/],
    ['the same replica twice', 'postgresql://r1/dhr,postgresql://r1/dhr', /names the same replica twice/],
    ['the primary itself', PRIMARY, /names DATABASE_URL itself/],
  ])('refused: %s, without repeating the URL', (_, value, message) => {
    const attempt = () => loadConfig({ DATABASE_URL: PRIMARY, DATABASE_READ_URL: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(message);
    try {
      attempt();
    } catch (error) {
      expect((error as Error).message).not.toMatch(/secret|hunter2/);
    }
  });

  test('bounds of the lag and the check interval', () => {
    expect(() => loadConfig({ DATABASE_URL: PRIMARY, REPLICA_MAX_LAG_MS: '50' })).toThrow(/REPLICA_MAX_LAG_MS must be an integer from 100/);
    expect(() => loadConfig({ DATABASE_URL: PRIMARY, REPLICA_CHECK_MS: 'often' })).toThrow(/REPLICA_CHECK_MS must be an integer/);
  });

  test('replicas are named by host, port and database: never the user or password', () => {
    expect(replicaName('postgresql://app:secret@replica-1/dhr')).toBe('replica-1:5432/dhr');
    expect(replicaName('postgres://app@10.0.0.7:6432/dhr?sslmode=require')).toBe('10.0.0.7:6432/dhr');
  });
});

describe('WAL positions', () => {
  test('parse and format as PostgreSQL writes them, ordered as 64-bit numbers', () => {
    expect(parseLsn('0/3000060')).toBe(0x3000060n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(() => parseLsn('16-B374')).toThrow(/not a WAL position/);
  });

  test('lag: how long ago the primary had WAL the replica has not replayed', () => {
    const h = new WalHistory(10_000);
    h.add(1000, 100n);
    // Behind the first sample this process took: by how much is unknown.
    expect(h.lagMs(50n, 1500)).toBe(Infinity);
    expect(h.lagMs(100n, 1500)).toBe(0);
    h.add(2000, 100n); // an idle primary: the position stays, the first time it was seen counts
    h.add(3000, 200n);
    h.add(4000, 300n);
    expect(h.latest()).toBe(300n);
    expect(h.lagMs(300n, 4500)).toBe(0);
    expect(h.lagMs(250n, 4500)).toBe(500);
    expect(h.lagMs(150n, 4500)).toBe(1500);
    // An idle primary does not make a caught-up replica look behind, however long ago the last write.
    expect(h.lagMs(300n, 100_000)).toBe(0);
  });

  test('samples older than the window go, but a replica behind all that is kept reads as more than the window behind', () => {
    const h = new WalHistory(1000);
    for (let t = 0; t <= 5000; t += 100) h.add(t, BigInt(t + 1));
    expect(h.lagMs(0n, 5000)).toBeGreaterThan(1000);
    expect(h.lagMs(BigInt(4901), 5000)).toBe(0);
    expect(h.lagMs(BigInt(4801), 5000)).toBe(100);
    expect(h.lagMs(BigInt(4800), 5000)).toBe(200);
  });
});
