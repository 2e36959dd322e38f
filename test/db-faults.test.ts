/**
 * Connection faults at the store: a dropped connection that is in use fails its statement with
 * an error we recognise, the process goes on, and the next statement gets a fresh connection.
 */
import { createServer } from 'node:net';
import { locatedError } from 'graphql';
import { Client } from 'pg';
import { typedFault } from '../src/graphql/db-faults';
import { classifyDatabaseError } from '../src/store/faults';
import { PostgresDatabase } from '../src/store/postgres';
import { createTestDatabase, type TestDatabase } from './helpers/database';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });
}

describe('database faults', () => {
  it('classifies an unreachable server as unavailable, from pg and from Prisma', async () => {
    const db = new PostgresDatabase({ url: `postgresql://postgres@127.0.0.1:${await closedPort()}/none`, connectTimeoutMs: 2000 });
    try {
      const raw = await db.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(classifyDatabaseError(raw)).toBe('unavailable');
      const prisma = await db.prisma.document.count().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(prisma).toBeDefined();
      expect(classifyDatabaseError(prisma)).toBe('unavailable');
    } finally {
      await db.close();
    }
    // What graphql-js makes of a driver's bare object thrown at a resolver (seen when a standby stopped).
    const located = locatedError({ errno: -104, code: 'ECONNRESET', syscall: 'connect' }, undefined, ['documents']);
    expect(classifyDatabaseError(located)).toBe('unavailable');
    expect(classifyDatabaseError(locatedError({ code: '23505' }, undefined))).toBeUndefined();
    expect(classifyDatabaseError(new Error('relation "nope" does not exist'))).toBeUndefined();
    expect(classifyDatabaseError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBeUndefined();
    expect(classifyDatabaseError(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe('timeout');
  });

  const onServer = process.env.DATABASE_URL ? it : it.skip;

  onServer('survives the backend of a checked-out connection being terminated (57P01), then serves again', async () => {
    const t: TestDatabase = await createTestDatabase();
    const killer = new Client({ connectionString: t.url });
    await killer.connect();
    try {
      const db = t.db as PostgresDatabase;
      const failure = await db
        .transaction(async (tx) => {
          const [{ pid }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          await killer.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.query('SELECT 1');
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(classifyDatabaseError(failure)).toBe('unavailable');
      // Prisma's adapter shares the pool: kill its connection mid-transaction too.
      const viaPrisma = await db.prisma
        .$transaction(async (tx) => {
          const [{ pid }] = await tx.$queryRawUnsafe<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
          await killer.query('SELECT pg_terminate_backend($1)', [pid]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.$queryRawUnsafe('SELECT 1');
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(classifyDatabaseError(viaPrisma)).toBe('unavailable');
      // The process is alive (an unhandled 'error' event would have ended it) and the pool recovers.
      expect(await db.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
      expect(await db.prisma.document.count()).toBe(0);
    } finally {
      await killer.end();
      await t.drop();
    }
  });

  onServer('a statement rolled back to break a deadlock is a CONFLICT to retry, not an internal error', async () => {
    const t: TestDatabase = await createTestDatabase();
    const [a, b] = [new Client({ connectionString: t.url }), new Client({ connectionString: t.url })];
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query('CREATE TABLE deadlock_rows (id int PRIMARY KEY, n int)');
      await a.query('INSERT INTO deadlock_rows VALUES (1, 0), (2, 0)');
      await a.query('BEGIN');
      await b.query('BEGIN');
      await a.query('UPDATE deadlock_rows SET n = 1 WHERE id = 1');
      await b.query('UPDATE deadlock_rows SET n = 1 WHERE id = 2');
      // Each now waits for the row the other holds: the server rolls one back (after deadlock_timeout).
      const outcomes = await Promise.all(
        [a.query('UPDATE deadlock_rows SET n = 2 WHERE id = 2'), b.query('UPDATE deadlock_rows SET n = 2 WHERE id = 1')].map((q) =>
          q.then(
            () => undefined,
            (e: unknown) => e,
          ),
        ),
      );
      const failures = outcomes.filter((e) => e !== undefined);
      expect(failures).toHaveLength(1);
      expect(classifyDatabaseError(failures[0])).toBe('conflict');
      const typed = typedFault(locatedError(failures[0], undefined, ['ingestDocuments']), undefined, 1000);
      expect(typed?.extensions).toMatchObject({ code: 'CONFLICT', retry: true });
      expect(typed?.message).toMatch(/retry/);
      expect(typed?.message).not.toMatch(/deadlock_rows|UPDATE|40P01/);
    } finally {
      await Promise.all([a.query('ROLLBACK').catch(() => undefined), b.query('ROLLBACK').catch(() => undefined)]);
      await Promise.all([a.end(), b.end()]);
      await t.drop();
    }
  });
});
