import { assertCitusCoordinator, assertDistribution, assertEmptyStore, loadCitusMigrations } from './citus';
import type { Database, Distribution, Queryable } from './db';
import { loadMigrations, MigrationError, splitStatements, type Migration } from './migration-files';

export { loadMigrations, MigrationError, migrationsDir, type Migration } from './migration-files';

export interface MigrateOptions {
  /** DHR_DISTRIBUTED: with 'citus', the Citus step (migrations/citus) follows the numbered files. */
  distributed?: Distribution;
}

/**
 * Applies pending migrations, each in its own transaction, recording them in schema_migrations.
 * An advisory lock keeps two servers starting at once from applying the same file twice.
 * Returns the versions applied now.
 */
export async function migrate(db: Database, migrations = loadMigrations(), options: MigrateOptions = {}): Promise<string[]> {
  await assertPgvectorAvailable(db);
  if (options.distributed === 'citus') await assertCitusCoordinator(db);
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`);
  const citus = options.distributed === 'citus';
  const applied = await applyAll(db, migrations, citus);
  if (citus) applied.push(...(await applyAll(db, loadCitusMigrations(), true, assertEmptyStore)));
  await assertDistribution(db, options.distributed);
  return applied;
}

async function applyAll(
  db: Database,
  migrations: Migration[],
  /** Send the script a statement at a time (Citus: see splitStatements). */
  split: boolean,
  before?: (tx: Queryable, version: string) => Promise<void>,
): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      // Index builds may outlast STATEMENT_TIMEOUT_MS, which bounds serving, not migrating.
      await tx.exec('SET LOCAL statement_timeout = 0');
      await tx.query('SELECT pg_advisory_xact_lock(7240311)');
      const rows = await tx.query<{ checksum: string }>('SELECT checksum FROM schema_migrations WHERE version = $1', [migration.version]);
      if (rows.length > 0) {
        if (!migration.accepted.includes(rows[0].checksum)) {
          throw new MigrationError(`migration ${migration.version} was changed after it was applied (checksum differs); add a new migration instead`);
        }
        return false;
      }
      await before?.(tx, migration.version);
      if (split) for (const statement of splitStatements(migration.sql)) await tx.exec(statement);
      else await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)', [migration.version, migration.checksum]);
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
