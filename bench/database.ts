import { Client } from 'pg';
import { PostgresDatabase } from '../src/store/postgres';

/** `name` on the server of `baseUrl` (optionally with a search_path). */
export function databaseUrl(baseUrl: string, name: string, searchPath?: string): string {
  const target = new URL(baseUrl);
  target.pathname = `/${name}`;
  if (searchPath) target.searchParams.set('options', `-c search_path=${searchPath}`);
  return target.toString();
}

/**
 * A bench's own database on the server of `baseUrl`, created when missing (dropped first with
 * `drop`), kept between runs. One connection: every search runs on the same backend, so session
 * settings stick.
 */
export async function openBenchDatabase(baseUrl: string, name: string, drop: boolean): Promise<PostgresDatabase> {
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    if (drop) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return new PostgresDatabase({ url: databaseUrl(baseUrl, name), maxConnections: 1 });
}
