/**
 * DATABASE_URL checked at start: a scheme other than postgres(ql)://, a value that
 * is not a URL, and a server that cannot be reached or refuses each read as one line naming
 * DATABASE_URL, where it points (never the password) and what to check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config';
import { DatabaseConnectError } from '../src/store/connect-problem';
import { openMigratedDatabase } from '../src/store/open';
import { dhr } from './helpers/cli';

const serverUrl = process.env.DATABASE_URL;

describe('DATABASE_URL', () => {
  it.each([
    ['mysql://app:s3cret@db.example/dhr', /^DATABASE_URL must be a postgresql:\/\/ \(or postgres:\/\/\) URL, got a mysql:\/\/ URL/],
    ['postgresql://app:se#cret@db.example/dhr', /^DATABASE_URL is not a URL: expected postgresql:\/\/user:password@host:5432\/database/],
    ['db.example:5432/dhr', /^DATABASE_URL must be a postgresql:\/\//],
  ])('refuses %s at start, without repeating it', (value, expected) => {
    let error: unknown;
    try {
      loadConfig({ DATABASE_URL: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(expected);
    expect((error as Error).message).not.toMatch(/s3cret|se#cret|db\.example/);
  });

  it('accepts postgres:// and postgresql:// URLs, and none (the embedded store)', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://app@db.example/dhr' }).databaseUrl).toBe('postgres://app@db.example/dhr');
    expect(loadConfig({ DATABASE_URL: 'postgresql:///dhr?host=/var/run/postgresql' }).databaseUrl).toBe('postgresql:///dhr?host=/var/run/postgresql');
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
  });

  it('names the setting, the place and what to check when nothing listens there', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'dhr-url-'));
    try {
      const error = await openMigratedDatabase({ databaseUrl: 'postgresql://app:s3cret@127.0.0.1:1/dhr', dataDir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseConnectError);
      expect((error as Error).message).toBe(
        'cannot open the database of DATABASE_URL (postgresql://app:***@127.0.0.1:1/dhr): nothing accepts connections on 127.0.0.1:1 (ECONNREFUSED); check that PostgreSQL runs there and the port in DATABASE_URL',
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  (serverUrl ? it : it.skip)('names a database that does not exist on a server that answers (PostgreSQL leg)', async () => {
    const url = new URL(serverUrl!);
    url.pathname = '/dhr_no_such_database';
    const error = await openMigratedDatabase({ databaseUrl: url.toString(), dataDir: tmpdir() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DatabaseConnectError);
    expect((error as Error).message).toMatch(
      /: the database "dhr_no_such_database" does not exist on .* \(3D000\); create it \(createdb dhr_no_such_database\)/,
    );
  });

  it('is one line from the CLI, exit code 1', async () => {
    const run = await dhr(['stats'], { DATABASE_URL: 'mysql://app:s3cret@db.example/dhr' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^DATABASE_URL must be a postgresql:\/\//)]);
  });
});
