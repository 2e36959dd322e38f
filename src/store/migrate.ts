import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths';
import type { Database } from './db';

export interface Migration {
  version: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {}

export function migrationsDir(): string {
  return join(packageRoot(), 'migrations');
}

/** Ordered SQL files `NNNN_name.sql`; the file name without extension is the version. */
export function loadMigrations(dir = migrationsDir()): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      return { version: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Applies pending migrations, each in its own transaction, recording them in schema_migrations.
 * An advisory lock keeps two servers starting at once from applying the same file twice.
 * Returns the versions applied now.
 */
export async function migrate(db: Database, migrations = loadMigrations()): Promise<string[]> {
  await assertPgvectorAvailable(db);
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      // Index builds may outlast STATEMENT_TIMEOUT_MS, which bounds serving, not migrating.
      await tx.exec('SET LOCAL statement_timeout = 0');
      await tx.query('SELECT pg_advisory_xact_lock(7240311)');
      const rows = await tx.query<{ checksum: string }>('SELECT checksum FROM schema_migrations WHERE version = $1', [
        migration.version,
      ]);
      if (rows.length > 0) {
        if (rows[0].checksum !== migration.checksum) {
          throw new MigrationError(
            `migration ${migration.version} was changed after it was applied (checksum differs); add a new migration instead`,
          );
        }
        return false;
      }
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [
        migration.version,
        migration.checksum,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}

async function assertPgvectorAvailable(db: Database): Promise<void> {
  const rows = await db.query<{ name: string }>("SELECT name FROM pg_available_extensions WHERE name = 'vector'");
  if (rows.length === 0) {
    throw new MigrationError(
      'pgvector is not installed on this PostgreSQL server (extension "vector" is not available). ' +
        'Install it for your PostgreSQL version: on Debian/Ubuntu `apt install postgresql-<major>-pgvector` ' +
        '(or run scripts/install-pgvector.sh as root where no package exists), on macOS `brew install pgvector`, ' +
        'or use the pgvector/pgvector Docker image; then restart this command.',
    );
  }
}
