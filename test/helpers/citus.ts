import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { migrate } from '../../src/store/migrate';
import { PostgresDatabase } from '../../src/store/postgres';
import { withDatabase } from './database';

/**
 * Databases for the Citus suite (npm run test:citus): a fresh distributed store on the local
 * cluster of scripts/citus-cluster.sh (CITUS_URL, the coordinator), and a fresh single-node store
 * on the machine's PostgreSQL (SINGLE_URL) to compare rankings with. Either URL missing fails the
 * suite: nothing here is skipped quietly.
 */
export interface CitusTestDatabase {
  db: PostgresDatabase;
  url: string;
  /** host:port of each worker, in node order. */
  workers: string[];
  drop(): Promise<void>;
}

export function citusUrl(): string {
  const url = process.env.CITUS_URL;
  if (!url) throw new Error('CITUS_URL is not set: start scripts/citus-cluster.sh and set CITUS_URL=postgresql://postgres@127.0.0.1:9700/postgres');
  return url;
}

export function singleUrl(): string {
  return process.env.SINGLE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

async function run(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Every node's URL (coordinator first) for one database name, from the coordinator's node list. */
async function nodeUrls(coordinator: string, name: string): Promise<{ urls: string[]; workers: string[] }> {
  const rows = await run(coordinator, "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeid");
  const workers = rows.map((r) => `${r.nodename}:${r.nodeport}`);
  const urls = [withDatabase(coordinator, name)];
  for (const w of workers) {
    const u = new URL(coordinator);
    const [host, port] = w.split(':');
    u.hostname = host;
    u.port = port;
    urls.push(withDatabase(u.toString(), name));
  }
  return { urls, workers };
}

/**
 * A fresh database on every node with citus and vector, the workers registered, migrated with
 * DHR_DISTRIBUTED=citus. `workers`: register only the first n (the others get the database and
 * its extensions, ready for a citus_add_node later).
 */
export async function createCitusDatabase(options: { migrated?: boolean; workers?: number } = {}): Promise<CitusTestDatabase> {
  const coordinator = citusUrl();
  const name = `citus_t${process.pid}_${randomBytes(3).toString('hex')}`;
  const { urls, workers } = await nodeUrls(coordinator, name);
  for (const url of urls) {
    await run(withDatabase(url, 'postgres'), `CREATE DATABASE ${name}`);
    await run(url, 'CREATE EXTENSION citus; CREATE EXTENSION vector');
  }
  const [host, port] = [new URL(coordinator).hostname, new URL(coordinator).port || '5432'];
  await run(urls[0], `SELECT citus_set_coordinator_host('${host}', ${port})`);
  for (const w of workers.slice(0, options.workers ?? workers.length)) {
    const [h, p] = w.split(':');
    await run(urls[0], `SELECT citus_add_node('${h}', ${p})`);
  }
  const db = new PostgresDatabase({ url: urls[0], maxConnections: 4 });
  db.distributed = 'citus';
  if (options.migrated !== false) await migrate(db, undefined, { distributed: 'citus' });
  return {
    db,
    url: urls[0],
    workers,
    drop: async () => {
      await db.close().catch(() => undefined);
      for (const url of urls) {
        await run(withDatabase(url, 'postgres'), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      }
    },
  };
}

/** A fresh single-node database (vector installed), migrated, to compare with. */
export async function createSingleDatabase(): Promise<{ db: PostgresDatabase; drop(): Promise<void> }> {
  const server = singleUrl();
  const name = `citus_single_${process.pid}_${randomBytes(3).toString('hex')}`;
  await run(server, `CREATE DATABASE ${name}`);
  const db = new PostgresDatabase({ url: withDatabase(server, name), maxConnections: 4 });
  await migrate(db);
  return {
    db,
    drop: async () => {
      await db.close().catch(() => undefined);
      await run(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
