/**
 * One operation must not starve the pool: the cost limit bounds the retrievals an
 * operation starts and their k1 × k2, an operation's statements hold at most its share of the
 * pool (DB_CONNECTIONS_PER_REQUEST), and a wait for a connection that every busy caller kept is
 * OVERLOADED, not "the database is unavailable". Timings live in `npm run bench:fairness`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parse } from 'graphql';
import { loadConfig } from '../src/config';
import { ErrorCode } from '../src/errors';
import { databaseFaultError } from '../src/graphql/db-faults';
import { classifyDatabaseError } from '../src/store/faults';
import { createContext } from '../src/graphql/context';
import { estimateOperation } from '../src/graphql/limits';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { PostgresDatabase } from '../src/store/postgres';
import { startServer } from '../src/server';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import { useTestServer } from './helpers/server';

/** The request: 20 aliased retrievals at the largest k1 and k2, 3 KB, no key. */
const aliases = (n: number, args: string, selection = '{ passages { rank score passage { id text } } }') =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: retrieve(question: "capital city and harbor number ${i}", ${args}) ${selection}`).join(' ')} }`;
const STARVING = aliases(20, 'k1: 1000, k2: 1000, mode: HYBRID_HIERARCHICAL');

describe('retrievals an operation may start', () => {
  it('counts retrievals and their k1 × k2, aliases, fragments and defaults included', async () => {
    const schema = await buildGraphQLSchema();
    const measure = (query: string, variables?: Record<string, unknown>) => estimateOperation(schema, parse(query), variables);
    expect(measure(STARVING)).toMatchObject({ retrieves: 20, retrievalWork: 20 * 1000 * 1000 });
    // Defaults: k1 = 100, k2 = 20.
    expect(measure(`{ retrieve(question: "q") { passages { rank } } }`)).toMatchObject({ retrieves: 1, retrievalWork: 2000 });
    expect(
      measure(
        `query($k: Int) { ...R b: retrieve(question: "q", k1: $k, k2: 3) { passages { rank } } } fragment R on Query { retrieve(question: "q", k1: 7) { documents { rank } } }`,
        { k: 50 },
      ),
    ).toMatchObject({ retrieves: 2, retrievalWork: 7 * 20 + 50 * 3 });
    // A selection that carries almost nothing still starts the work.
    const cheap = measure(aliases(3, 'k1: 1000, k2: 1000', '{ timings { totalMs } }'));
    expect(cheap).toMatchObject({ retrieves: 3, retrievalWork: 3_000_000 });
    expect(cheap.cost).toBeLessThan(loadConfig({}).maxQueryCost);
    expect(measure(`{ stats { documents } }`)).toMatchObject({ retrieves: 0, retrievalWork: 0 });
  });
});

describe('an operation that would start too much work (HTTP)', () => {
  const server = useTestServer();

  it('refuses the 20-alias request with QUERY_TOO_COSTLY before anything runs, while 8 small readers are answered', async () => {
    const before = server.db.statements.count;
    const alone = await server.post(STARVING, undefined, null);
    // Refused before execution: not a statement was sent for it.
    expect(server.db.statements.count).toBe(before);
    expect(alone.status).toBe(400);
    const [reply, ...readers] = await Promise.all([
      server.post(STARVING, undefined, null),
      ...Array.from({ length: 8 }, () => server.post('{ stats { documents } }', undefined, null)),
    ]);
    for (const r of readers) expect(r.body).toEqual({ data: { stats: { documents: 0 } } });
    expect(reply.status).toBe(400);
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
    expect(reply.body.errors[0].message).toBe('query starts 20 retrievals, over the limit of 10 per operation (MAX_RETRIEVES); send them as separate requests');
    expect(reply.body.data).toBeUndefined();
  });

  it('refuses k1 × k2 over MAX_RETRIEVAL_WORK even when the selection is cheap, and lets the limit itself through', async () => {
    const over = await server.post(aliases(3, 'k1: 1000, k2: 1000, mode: LEXICAL', '{ timings { totalMs } }'), undefined, null);
    expect(over.status).toBe(400);
    expect(over.body.errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
    expect(over.body.errors[0].message).toMatch(/k1 × k2 = 3000000 in all, over the limit of 2000000 \(MAX_RETRIEVAL_WORK\)/);
    const at = await server.post(aliases(2, 'k1: 1000, k2: 1000, mode: LEXICAL', '{ timings { totalMs } }'), undefined, null);
    expect(at.body.errors).toBeUndefined();
    expect(Object.keys(at.body.data)).toEqual(['a0', 'a1']);
  });
});

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('a share of the pool per operation (PostgreSQL)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t.drop());

  it("holds an operation's statements to its share while other callers get the rest of the pool", async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 4 });
    try {
      const config = { ...loadConfig({}), dbConnectionsPerRequest: 1 };
      const heavy = createContext(db, config).db;
      let heavyDone = 0;
      let busyPeak = 0;
      const watch = setInterval(() => {
        const u = db.poolUsage();
        busyPeak = Math.max(busyPeak, u.total - u.idle);
      }, 5);
      const running = Array.from({ length: 8 }, () => heavy.query('SELECT pg_sleep(0.15)').then(() => heavyDone++));
      // Another operation's statement is not queued behind the eight.
      const other = createContext(db, config).db;
      await other.query('SELECT 1');
      const doneWhenOtherAnswered = heavyDone;
      await Promise.all(running);
      clearInterval(watch);
      expect(doneWhenOtherAnswered).toBeLessThan(8);
      expect((heavy as unknown as { shareUsage: { peak: number } }).shareUsage.peak).toBe(1);
      // Never more than the share plus the other caller's one connection were checked out.
      expect(busyPeak).toBeLessThanOrEqual(2);
      // A transaction whose body reads through the same context does not wait on itself.
      await expect(heavy.transaction(async (tx) => [...(await tx.query('SELECT 1 AS a')), ...(await heavy.query('SELECT 2 AS a'))])).resolves.toEqual([
        { a: 1 },
        { a: 2 },
      ]);
    } finally {
      await db.close();
    }
  });

  it('keeps nothing per operation in the process: promises cost as much after 300 operations as after one', async () => {
    // Node 20 visits every AsyncLocalStorage that ever ran, for each promise created (its _propagate):
    // a storage made per operation grew that list with every request served (45 ms of CPU a question
    // after 1,700 of them) and never freed it. Counted, not timed.
    const proto = AsyncLocalStorage.prototype as unknown as { _propagate: (...args: unknown[]) => unknown };
    expect(typeof proto._propagate).toBe('function');
    const original = proto._propagate;
    let visits = 0;
    proto._propagate = function (this: unknown, ...args: unknown[]) {
      visits++;
      return original.apply(this, args);
    };
    const visitsForSomePromises = async () => {
      visits = 0;
      await Promise.all(Array.from({ length: 10 }, () => new Promise((r) => setImmediate(r))));
      return visits;
    };
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 2 });
    try {
      const config = { ...loadConfig({}), dbConnectionsPerRequest: 1 };
      await createContext(db, config).db.query('SELECT 1');
      const before = await visitsForSomePromises();
      for (let i = 0; i < 300; i++) await createContext(db, config).db.query('SELECT 1');
      expect(await visitsForSomePromises()).toBe(before);
    } finally {
      proto._propagate = original;
      await db.close();
    }
  });

  it('gates a statement of another operation sent from inside this one, and not one of its own', async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 4 });
    try {
      const config = { ...loadConfig({}), dbConnectionsPerRequest: 1 };
      const a = createContext(db, config).db as ReturnType<typeof createContext>['db'] & { shareUsage: { peak: number } };
      const b = createContext(db, config).db as typeof a;
      // Inside a's turn: b's statement takes b's turn (b's peak becomes 1); a's own runs without waiting on itself.
      const rows = await a.transaction(async () => [...(await b.query<{ x: number }>('SELECT 1 AS x')), ...(await a.query<{ x: number }>('SELECT 2 AS x'))]);
      expect(rows).toEqual([{ x: 1 }, { x: 2 }]);
      expect(b.shareUsage.peak).toBe(1);
      expect(a.shareUsage.peak).toBe(1);
    } finally {
      await db.close();
    }
  });

  it('does not start statements still queued when the request has run out of time', async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 2 });
    try {
      const config = { ...loadConfig({}), dbConnectionsPerRequest: 1, requestTimeoutMs: 1 };
      const ctx = createContext(db, config).db;
      const before = db.statements.count;
      await new Promise((r) => setTimeout(r, 5));
      await expect(ctx.query('SELECT 1')).rejects.toMatchObject({ code: ErrorCode.TIMEOUT, message: expect.stringMatching(/REQUEST_TIMEOUT_MS/) });
      expect(db.statements.count).toBe(before);
    } finally {
      await db.close();
    }
  });

  it('answers a wait for a connection that busy callers kept with OVERLOADED, not a database outage (our statements and Prisma reads)', async () => {
    const db = new PostgresDatabase({ url: t.url!, maxConnections: 1, connectTimeoutMs: 200 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    try {
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const holder = db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        entered();
        await held;
      });
      await inside;
      const error = await db.query('SELECT 1').catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'PoolBusyError', message: expect.stringMatching(/^the server is busy: all 1 database connections \(DB_POOL_MAX\)/) });
      expect(classifyDatabaseError(error)).toBe('busy');
      // The navigation reads go through Prisma's driver adapter on the same pool: the same error.
      const read = await db.prisma.document.findMany({ take: 1 }).catch((e: unknown) => e);
      expect(classifyDatabaseError(read)).toBe('busy');
      // What the API answers for it (the database-fault plugin's mapping).
      const answer = databaseFaultError('busy', 1000);
      expect(answer.extensions).toMatchObject({ code: ErrorCode.OVERLOADED, http: { status: 503 } });
      expect((answer.extensions.http as { headers: Map<string, string> }).headers.get('retry-after')).toBe('1');
      expect(answer.message).toMatch(/^the server is busy/);
      // Through the API: a Prisma-backed read (documents) and a retrieval, both answered as busy.
      const server = await startServer(db, loadConfig({ PORT: '0', LOG_LEVEL: 'fatal' }));
      try {
        for (const query of ['{ documents(first: 1) { totalCount } }', '{ retrieve(question: "harbor", mode: LEXICAL) { passages { rank } } }']) {
          const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
          const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
          expect(response.status).toBe(503);
          expect(response.headers.get('retry-after')).toBe('1');
          expect(body.errors.map((e) => e.extensions.code)).toEqual(['OVERLOADED']);
          expect(body.errors[0].message).toMatch(/^the server is busy/);
        }
      } finally {
        await server.stop();
      }
      release();
      await holder;
      // The connection is back: the same statement runs.
      await expect(db.query<{ one: number }>('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
    } finally {
      release();
      await db.close();
    }
  });
});
