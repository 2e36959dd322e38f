import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const run = promisify(execFile);
const BIN = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';

/**
 * A PostgreSQL server of its own for a test that restarts the database (never the shared one
 * on 5432): initdb into a temporary directory, on a free port, trust auth. initdb refuses to run
 * as root, so as root the binaries run as the `postgres` user, in a directory it owns.
 */
export interface PrivatePostgres {
  url: string;
  /** pg_ctl restart -m fast: connections in use are terminated (57P01). */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'dhr-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pg = (bin: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(BIN, bin), ...args]) : run(join(BIN, bin), args));
  const data = join(dir, 'data');
  const port = await freePort();
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const ctl = (...args: string[]) => pg('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', ...args]);
  const start = async () => {
    await ctl('-o', options, 'start');
  };
  await start();
  const admin = new Client({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
  await admin.connect();
  try {
    await admin.query('CREATE DATABASE dhr');
  } finally {
    await admin.end();
  }
  const url = `postgresql://postgres@127.0.0.1:${port}/dhr`;
  const db = new Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS vector');
  } finally {
    await db.end();
  }
  return {
    url,
    restart: async () => {
      await ctl('-m', 'fast', '-o', options, 'restart');
    },
    stop: async () => {
      await ctl('-m', 'fast', 'stop');
    },
    start,
    destroy: async () => {
      await ctl('-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
