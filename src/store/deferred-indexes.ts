import type { Database } from './db';
import { indexDefinitions, quoteIdentifier as quote } from './index-definitions';

/**
 * The postings' keys and indexes, dropped while a bulk ingest fills an empty store and built once
 * at its end: sorting the whole load once costs less than inserting every posting into four
 * B-trees (bench:ingest, docs/benchmarks.md). Each dropped
 * definition is recorded in `deferred_indexes` (migration 0023) in the transaction that drops it,
 * and built from that record, so a load that dies half way leaves the store complete but slow
 * (searches scan the postings) until the next open of the store or bulk ingest builds them.
 * Single-server PostgreSQL only: PGlite serves its readers from the same connection, and on Citus
 * the postings live on the shards.
 */
const TABLES = ['passage_postings', 'document_postings'];

/**
 * From this many passages, a bulk ingest into a store without postings builds the postings' keys
 * and indexes once at its end (below): 1.26–1.28× indexing as it writes at 30,000 passages, 1.23×
 * at 10,000 (bench:ingest, docs/benchmarks.md). Smaller loads keep the usual
 * way: their inserts cost little, and searches scan the postings while their indexes are away.
 */
export const DEFER_INDEXES_FROM_PASSAGES = 10_000;

/** SQLSTATE of a lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Drops the postings' keys and indexes when both tables are empty and nothing is deferred already.
 * Returns whether it did (the caller then owes `buildDeferredIndexes`). Gives up, dropping nothing,
 * when a reader keeps the tables for more than `lockTimeoutMs`: the load then goes the usual way.
 */
export async function deferPostingsIndexes(db: Database, lockTimeoutMs = 2_000): Promise<boolean> {
  if (db.kind !== 'postgres' || db.distributed) return false;
  try {
    return await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
      await tx.exec(`LOCK TABLE ${TABLES.join(', ')}, deferred_indexes IN ACCESS EXCLUSIVE MODE`);
      const [{ free }] = await tx.query<{ free: boolean }>(
        `SELECT NOT EXISTS (SELECT 1 FROM passage_postings) AND NOT EXISTS (SELECT 1 FROM document_postings)
                AND NOT EXISTS (SELECT 1 FROM deferred_indexes) AS free`,
      );
      if (!free) return false;
      const indexes = await indexDefinitions(tx, TABLES);
      for (const r of indexes) {
        const build = r.constraint_name ? `ALTER TABLE ${quote(r.table_name)} ADD CONSTRAINT ${quote(r.constraint_name)} ${r.definition}` : r.definition;
        await tx.query('INSERT INTO deferred_indexes (name, table_name, definition) VALUES ($1, $2, $3)', [r.index_name, r.table_name, build]);
        await tx.exec(
          r.constraint_name ? `ALTER TABLE ${quote(r.table_name)} DROP CONSTRAINT ${quote(r.constraint_name)}` : `DROP INDEX ${quote(r.index_name)}`,
        );
      }
      return indexes.length > 0;
    });
  } catch (error) {
    if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) return false;
    throw error;
  }
}

/**
 * Builds whatever `deferred_indexes` lists, in one transaction that also clears the record (a
 * second caller waits for it and then finds nothing) and analyzes the tables. Returns the number
 * built; one small read when there is nothing to build.
 */
export async function buildDeferredIndexes(db: Database, maintenanceWorkMem = '256MB'): Promise<number> {
  if (db.kind !== 'postgres') return 0;
  const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM deferred_indexes');
  if (n === 0) return 0;
  return db.transaction(async (tx) => {
    // Index builds may outlast STATEMENT_TIMEOUT_MS, which bounds serving (as migrations do).
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query(`SELECT set_config('maintenance_work_mem', $1, true)`, [maintenanceWorkMem]);
    const rows = await tx.query<{ definition: string }>('SELECT definition FROM deferred_indexes ORDER BY table_name, name FOR UPDATE');
    for (const r of rows) await tx.exec(r.definition);
    await tx.exec('DELETE FROM deferred_indexes');
    // Planner statistics for the tables as loaded (the visibility map is autovacuum's, as after any load).
    if (rows.length > 0) await tx.exec(`ANALYZE ${TABLES.join(', ')}`);
    return rows.length;
  });
}
