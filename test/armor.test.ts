/**
 * Requests that cost more than they look: fragment bombs, alias floods, huge string arguments,
 * long statements, and too many requests. Each is refused with a typed error, over real HTTP.
 */
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { startServer } from '../src/server';
import { createApiKey } from '../src/store/keys';
import { PostgresDatabase } from '../src/store/postgres';
import { createTestApi } from './helpers/api';
import { createTestDatabase, type TestDatabase } from './helpers/database';

const json = { 'content-type': 'application/json' };

async function post(url: string, query: string, variables?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as any;
  return { status: response.status, body, retryAfter: response.headers.get('retry-after') };
}

/** `{ ...F0 } fragment F0 on Query { ...F1 ...F1 } … fragment Fn on Query { stats { documents } }`: 2^n fields once expanded. */
function fragmentBomb(levels: number): string {
  const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  return `{ ...F0 } ${fragments.join(' ')} fragment F${levels} on Query { stats { documents } }`;
}

describe('operation limits over HTTP', () => {
  let t: TestDatabase;
  let url: string;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    t = await createTestDatabase();
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0', RATE_LIMIT_QUERIES: '0' })));
  });
  afterAll(async () => {
    await stop();
    await t.drop();
  });

  it('refuses fragment bombs of 30 levels (under 1 KB) and 60 without walking their 2^n fields', async () => {
    expect(Buffer.byteLength(fragmentBomb(30))).toBeLessThan(1024 + 400);
    // No wall-clock bound: at 60 levels a walk of the 2^60 fields would never end, so the test's
    // timeout catches a walk that is exponential again.
    for (const levels of [22, 30, 60]) {
      const { status, body } = await post(url, fragmentBomb(levels));
      expect(status).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors[0].extensions.code).toBe('QUERY_TOO_COSTLY');
      expect(body.errors[0].message).toBe('query selects more than 10000 fields once its fragments are expanded (MAX_QUERY_NODES)');
    }
    // The server still answers.
    expect((await post(url, '{ stats { documents } }')).body).toEqual({ data: { stats: { documents: 0 } } });
  });

  it('refuses 2,000 aliased retrieve fields and 5,000 aliased stats', async () => {
    const retrieves = Array.from({ length: 2000 }, (_, i) => `r${i}: retrieve(question: "q", k1: 1, k2: 1) { passages { rank } }`).join(' ');
    const flood = await post(url, `{ ${retrieves} }`);
    expect(flood.status).toBe(400);
    // Over MAX_QUERY_TOKENS first: refused while parsing.
    expect(flood.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(flood.body.errors[0].message).toMatch(/Document contains more tha[nt] 5000 tokens/);
    const stats = Array.from({ length: 5000 }, (_, i) => `s${i}: stats { documents }`).join(' ');
    expect((await post(url, `{ ${stats} }`)).body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    // With the token limit out of the way, the alias limit refuses them before anything runs.
    const api = await createTestApi({ MAX_QUERY_TOKENS: '1000000' });
    try {
      const result = await api.exec(`{ ${retrieves} }`);
      expect(result.data).toBeUndefined();
      expect(result.errors?.[0]).toMatchObject({
        message: 'query has 2000 aliases, over the limit of 30 (MAX_ALIASES)',
        extensions: { code: 'QUERY_TOO_COSTLY' },
      });
      expect((await api.exec(`{ ${stats} }`)).errors?.[0].message).toBe('query has 5000 aliases, over the limit of 30 (MAX_ALIASES)');
    } finally {
      await api.close();
    }
  });

  it('counts aliases, fragments included, against MAX_ALIASES', async () => {
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: stats { documents }`).join(' ');
    expect((await post(url, `{ ${aliases(30)} }`)).body.errors).toBeUndefined();
    const over = await post(url, `{ ${aliases(31)} }`);
    expect(over.status).toBe(400);
    expect(over.body.errors[0]).toMatchObject({
      message: 'query has 31 aliases, over the limit of 30 (MAX_ALIASES)',
      extensions: { code: 'QUERY_TOO_COSTLY' },
    });
    // 16 aliases in a fragment spread twice, and one more: 33.
    const spread = await post(url, `{ ...A b: stats { documents } ...A } fragment A on Query { ${aliases(16)} }`);
    expect(spread.body.errors[0].message).toBe('query has 33 aliases, over the limit of 30 (MAX_ALIASES)');
  });

  it('refuses more directives than MAX_DIRECTIVES', async () => {
    const directives = (n: number) => Array.from({ length: n }, () => 'stats @include(if: true) { documents }').join(' ');
    expect((await post(url, `{ ${directives(50)} }`)).body).toEqual({ data: { stats: { documents: 0 } } });
    const over = await post(url, `{ ${directives(51)} }`);
    expect(over.body.errors[0]).toMatchObject({
      message: 'query has 51 directives, over the limit of 50 (MAX_DIRECTIVES)',
      extensions: { code: 'QUERY_TOO_COSTLY' },
    });
  });

  it('refuses a string argument longer than MAX_ARGUMENT_LENGTH with BAD_USER_INPUT naming it', async () => {
    const huge = 'x'.repeat(1_000_000);
    const variable = await post(url, `query($t: String) { documents(titleContains: $t) { totalCount } }`, { t: huge });
    expect(variable.status).toBe(400);
    expect(variable.body.errors[0]).toEqual({
      message: 'titleContains is 1000000 characters long, over the limit of 4096 (MAX_ARGUMENT_LENGTH)',
      extensions: { code: 'BAD_USER_INPUT', argument: 'titleContains' },
    });
    const literal = await post(url, `{ documents(titleContains: "${'y'.repeat(5000)}") { totalCount } }`);
    expect(literal.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'titleContains' });
    // Inside an input object (a retrieval filter), and inside a JSON metadata filter.
    const filter = await post(url, `query($f: RetrievalFilter) { retrieve(question: "q", mode: LEXICAL, filter: $f) { passages { rank } } }`, {
      f: { sources: ['s'.repeat(5000)] },
    });
    expect(filter.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'filter' });
    const metadata = await post(url, `query($f: RetrievalFilter) { retrieve(question: "q", mode: LEXICAL, filter: $f) { passages { rank } } }`, {
      f: { metadata: { k: 'm'.repeat(5000) } },
    });
    expect(metadata.body.errors[0].extensions).toEqual({ code: 'BAD_USER_INPUT', argument: 'filter' });
    // Just under the limit runs.
    expect((await post(url, `query($t: String) { documents(titleContains: $t) { totalCount } }`, { t: 'z'.repeat(4096) })).body).toEqual({
      data: { documents: { totalCount: 0 } },
    });
  });
});

describe('rate limits', () => {
  let t: TestDatabase;
  let url: string;
  let stop: () => Promise<void>;
  let admin: Record<string, string>;
  let reader: Record<string, string>;
  beforeAll(async () => {
    t = await createTestDatabase();
    admin = { authorization: `Bearer ${(await createApiKey(t.db, { role: 'admin', name: 'a' })).key}` };
    reader = { authorization: `Bearer ${(await createApiKey(t.db, { role: 'reader', name: 'r' })).key}` };
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0', RATE_LIMIT_QUERIES: '3', RATE_LIMIT_MUTATIONS: '2', RATE_LIMIT_WINDOW_S: '60' })));
  });
  afterAll(async () => {
    await stop();
    await t.drop();
  });

  it('answers 429 RATE_LIMITED with Retry-After past the budget, per key or address, queries and mutations apart', async () => {
    const query = '{ stats { documents } }';
    for (let i = 0; i < 3; i++) expect((await post(url, query)).status).toBe(200);
    const limited = await post(url, query);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect(limited.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(limited.body.errors[0].message).toMatch(/^too many queries: the limit is 3 per 60 s \(RATE_LIMIT_QUERIES\); retry in \d+ s$/);

    // A key has a budget of its own (not its address's).
    for (let i = 0; i < 3; i++) expect((await post(url, query, undefined, reader)).status).toBe(200);
    expect((await post(url, query, undefined, reader)).status).toBe(429);

    // Mutations count apart from queries: the admin key's queries do not use them up.
    for (let i = 0; i < 3; i++) expect((await post(url, query, undefined, admin)).status).toBe(200);
    const mutation = 'mutation { ingestDocuments(documents: [{ title: "T", text: "x" }]) { created updated unchanged } }';
    expect((await post(url, mutation, undefined, admin)).body.errors).toBeUndefined();
    expect((await post(url, mutation, undefined, admin)).body.errors).toBeUndefined();
    const third = await post(url, mutation, undefined, admin);
    expect(third.status).toBe(429);
    expect(third.body.errors[0].message).toMatch(/^too many mutations: the limit is 2 per 60 s \(RATE_LIMIT_MUTATIONS\)/);
    // The refused mutation did not run.
    expect(await t.db.query('SELECT count(*)::int AS n FROM documents')).toEqual([{ n: 1 }]);
  });

  it('is on by default with generous budgets; 0 turns a budget off', () => {
    const config = loadConfig({});
    expect(config.rateLimitQueries).toBe(1200);
    expect(config.rateLimitMutations).toBe(120);
    expect(config.rateLimitWindowS).toBe(60);
    expect(loadConfig({ RATE_LIMIT_QUERIES: '0' }).rateLimitQueries).toBe(0);
    expect(() => loadConfig({ RATE_LIMIT_WINDOW_S: '0' })).toThrow(/RATE_LIMIT_WINDOW_S must be an integer from 1/);
  });
});

// A statement waiting on a lock counts against statement_timeout: a deterministic slow statement.
const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('statement timeout and request deadline (PostgreSQL)', () => {
  let t: TestDatabase;
  let locker: Client;
  beforeAll(async () => {
    t = await createTestDatabase();
    locker = new Client({ connectionString: t.url });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await t.drop();
  });

  async function withTableLocked<T>(fn: () => Promise<T>): Promise<T> {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE documents IN ACCESS EXCLUSIVE MODE');
    try {
      return await fn();
    } finally {
      await locker.query('ROLLBACK');
    }
  }

  it('cancels a statement past STATEMENT_TIMEOUT_MS with a typed TIMEOUT error', async () => {
    const config = loadConfig({ PORT: '0', STATEMENT_TIMEOUT_MS: '300' });
    const db = new PostgresDatabase({ url: t.url!, statementTimeoutMs: config.statementTimeoutMs });
    const { url, stop } = await startServer(db, config);
    try {
      // The lock is held until the answer comes: without the timeout this would wait for the test's timeout.
      const result = await withTableLocked(() => post(url, '{ documents(first: 1) { totalCount } }'));
      expect(result.body.errors).toHaveLength(1);
      expect(result.body.errors[0].extensions).toEqual({ code: 'TIMEOUT' });
      expect(result.body.errors[0].message).toMatch(/^a database statement ran longer than 300 ms \(STATEMENT_TIMEOUT_MS\) and was cancelled/);
      // Once the lock is gone the same query runs.
      expect((await post(url, '{ documents(first: 1) { totalCount } }')).body).toEqual({ data: { documents: { totalCount: 0 } } });
    } finally {
      await stop();
      await db.close();
    }
  });

  it('answers 503 TIMEOUT once REQUEST_TIMEOUT_MS has passed', async () => {
    const config = loadConfig({ PORT: '0', REQUEST_TIMEOUT_MS: '300', STATEMENT_TIMEOUT_MS: '0' });
    const db = new PostgresDatabase({ url: t.url! });
    const { url, stop } = await startServer(db, config);
    try {
      const result = await withTableLocked(async () => {
        const answer = await post(url, '{ documents(first: 1) { totalCount } }');
        return answer;
      });
      expect(result.status).toBe(503);
      expect(result.retryAfter).toBe('1');
      expect(result.body).toEqual({
        errors: [{ message: 'the request took longer than 300 ms (REQUEST_TIMEOUT_MS)', extensions: { code: 'TIMEOUT' } }],
      });
    } finally {
      await stop();
      await db.close();
    }
  });
});
