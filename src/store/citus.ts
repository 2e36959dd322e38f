import { join } from 'node:path';
import { DomainError, ErrorCode } from '../errors';
import type { Database, Distribution, Queryable } from './db';
import { loadMigrations, MigrationError, migrationsDir, type Migration } from './migration-files';

/** Tables distributed by document id, all colocated with documents (migrations/citus/0001, 0004). */
export const DISTRIBUTED_TABLES = [
  'documents',
  'sections',
  'passages',
  'links',
  'document_embeddings',
  'passage_embeddings',
  'passage_postings',
  'document_postings',
  'document_lengths',
  'pending_documents',
  'bm25_stats',
  'bm25_terms',
  'sentence_embeddings',
] as const;
/** The small tables, a copy on every node. */
export const REFERENCE_TABLES = [
  'embedding_models',
  'active_encoders',
  'embedding_jobs',
  'embedding_job_batches',
  'api_keys',
  'query_adapters',
  'active_adapter',
  'feedback',
] as const;

/** The Citus set-up steps (migrations/citus/NNNN_name.sql), recorded as `citus/NNNN_name`. */
export function loadCitusMigrations(dir = join(migrationsDir(), 'citus')): Migration[] {
  return loadMigrations(dir, 'citus/');
}

interface CitusFacts {
  citus: string | null;
  vector: string | null;
  distributed: string[];
}

async function facts(db: Queryable): Promise<CitusFacts> {
  const ext = await db.query<{ extname: string; extversion: string }>("SELECT extname, extversion FROM pg_extension WHERE extname IN ('citus', 'vector')");
  const version = (name: string) => ext.find((e) => e.extname === name)?.extversion ?? null;
  const citus = version('citus');
  const distributed = citus ? (await db.query<{ name: string }>('SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition')).map((r) => r.name) : [];
  return { citus, vector: version('vector'), distributed };
}

/**
 * Before the Citus step: refuses, saying what to run, unless this is a Citus coordinator with
 * active workers that all run the coordinator's Citus and pgvector versions.
 */
export async function assertCitusCoordinator(db: Queryable): Promise<void> {
  const f = await facts(db);
  if (!f.citus) {
    throw new MigrationError(
      'DHR_DISTRIBUTED=citus, but the citus extension is not installed in this database. On the coordinator and on ' +
        "every worker: set shared_preload_libraries = 'citus' (restart), then in this database run CREATE EXTENSION citus; " +
        'CREATE EXTENSION vector; and on the coordinator SELECT citus_set_coordinator_host(...) and SELECT citus_add_node(...) ' +
        'per worker (scripts/citus-cluster.sh does all of it for a local cluster; docs/scale-out.md).',
    );
  }
  const workers = await db.query<{ node: string }>(
    "SELECT nodename || ':' || nodeport AS node FROM pg_dist_node WHERE noderole = 'primary' AND isactive AND groupid <> 0 ORDER BY 1",
  );
  if (workers.length === 0) {
    throw new MigrationError(
      "DHR_DISTRIBUTED=citus, but this Citus coordinator has no active worker. Run SELECT citus_add_node('host', port) " +
        'for each worker (with citus and vector installed in this database there), then restart this command.',
    );
  }
  const remote = await db.query<{ node: string; result: string; success: boolean }>(
    `SELECT nodename || ':' || nodeport AS node, result, success FROM run_command_on_workers(
       $$SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'citus'), '-') || ' ' ||
                coalesce((SELECT extversion FROM pg_extension WHERE extname = 'vector'), '-')$$)`,
  );
  const expected = `${f.citus} ${f.vector ?? '-'}`;
  const off = remote.filter((r) => !r.success || r.result !== expected);
  if (off.length > 0) {
    const what = off.map((r) => `${r.node} has ${r.success ? `citus/vector ${r.result.replace(' ', '/')}` : 'no answer'}`).join('; ');
    throw new MigrationError(
      `the Citus workers do not match the coordinator (citus ${f.citus}, vector ${f.vector ?? 'missing'}): ${what}. ` +
        'Install the same versions on every node and run ALTER EXTENSION citus UPDATE; ALTER EXTENSION vector UPDATE; ' +
        '(CREATE EXTENSION where missing) in this database on each, then restart this command.',
    );
  }
}

/**
 * At start, after migrating: refuses a store whose distribution disagrees with DHR_DISTRIBUTED,
 * or a Citus store with a table left undistributed, saying what to run.
 */
export async function assertDistribution(db: Queryable, wanted: Distribution | undefined): Promise<void> {
  const f = await facts(db);
  const distributed = f.distributed.includes('documents');
  if (!wanted) {
    if (distributed) {
      throw new MigrationError('this store is distributed with Citus (its documents table is a distributed table); set DHR_DISTRIBUTED=citus and restart.');
    }
    return;
  }
  const missing = [...DISTRIBUTED_TABLES, ...REFERENCE_TABLES].filter((t) => !f.distributed.includes(t));
  if (missing.length > 0) {
    throw new MigrationError(
      `DHR_DISTRIBUTED=citus, but these tables are not distributed: ${missing.join(', ')}. Run \`dhr migrate\` with ` +
        'DHR_DISTRIBUTED=citus against the coordinator of a fresh database (the Citus step distributes a store before its first document).',
    );
  }
}

/** The Citus step refuses a store that already holds documents (see docs/scale-out.md: re-ingest). */
export async function assertEmptyStore(tx: Queryable, version: string): Promise<void> {
  if (version !== 'citus/0001_distribute') return;
  const [{ n }] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
  if (n > 0) {
    throw new MigrationError(
      `the Citus step ${version} distributes a store before its first document, and this one holds ${n}. ` +
        'Create a fresh database on the coordinator, run dhr migrate with DHR_DISTRIBUTED=citus, and ingest the corpus again.',
    );
  }
}

/** Settings every distributed search sends: a down worker fails the query fast instead of hanging. */
export const CITUS_SEARCH_SETTINGS: Record<string, string> = {
  'citus.node_connection_timeout': '3000',
};

/**
 * A query that failed because a worker could not be reached, as SHARD_UNAVAILABLE naming the
 * worker (host:port of the shard group's placement); anything else is returned unchanged.
 */
export function shardUnavailable(error: unknown): unknown {
  const message = error instanceof Error ? error.message : '';
  const match =
    /connection to the remote node (?:\S+@)?([\w.-]+:\d+) failed/.exec(message) ??
    /(?:could not establish any connections to the node|could not connect to) ([\w.-]+:\d+)/.exec(message);
  if (!match) return error;
  return new DomainError(
    ErrorCode.SHARD_UNAVAILABLE,
    `a shard group of the corpus is unavailable: its worker ${match[1]} cannot be reached. Retry later; ` +
      'an operator restarts the worker (or promotes its replica).',
    { details: { worker: match[1] } },
  );
}

/** Runs fn; a worker that cannot be reached surfaces as SHARD_UNAVAILABLE. */
export async function onShards<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  if (db.distributed !== 'citus') return fn();
  try {
    return await fn();
  } catch (error) {
    throw shardUnavailable(error);
  }
}
