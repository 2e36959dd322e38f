import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import type { Database } from '../../src/store/db';
import { createApiKey } from '../../src/store/keys';
import { createTestDatabase, type TestDatabase } from './database';
import { captureLog, type LogLine } from './log-capture';

export interface HttpReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestServer {
  readonly db: Database;
  /** The database's URL on PostgreSQL (for a second server over the same store); undefined on PGlite. */
  readonly dbUrl: string | undefined;
  readonly url: string;
  /** An admin key made for the suite. */
  readonly adminKey: string;
  /** What the server logged (its JSON log, captured instead of written to stderr). */
  readonly logs: LogLine[];
  /** POSTs a GraphQL operation as JSON, with the admin key unless `authorization` says otherwise (null: none). */
  post<T = any>(query: string, variables?: unknown, authorization?: string | null): Promise<HttpReply<T>>;
}

/**
 * The real HTTP server (startServer) on a fresh test database, for the tests of a describe block:
 * started before them, stopped and dropped after. `env` is the server's environment (PORT=0).
 */
export function useTestServer(env: Record<string, string> = {}): TestServer {
  let t: TestDatabase | undefined;
  let url = '';
  let adminKey = '';
  let stop: (() => Promise<void>) | undefined;
  const log = captureLog();
  beforeAll(async () => {
    t = await createTestDatabase();
    adminKey = (await createApiKey(t.db, { role: 'admin', name: 'test admin' })).key;
    ({ url, stop } = await startServer(t.db, loadConfig({ PORT: '0', ...env }), undefined, { logDestination: log.destination }));
  });
  // The server stops before its database goes.
  afterAll(async () => {
    await stop?.();
    await t?.drop();
  });
  return {
    get db() {
      if (!t) throw new Error('the test server exists only inside tests and hooks');
      return t.db;
    },
    get dbUrl() {
      return t?.url;
    },
    get url() {
      return url;
    },
    get adminKey() {
      return adminKey;
    },
    logs: log.lines,
    async post(query, variables, authorization) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const auth = authorization === undefined ? `Bearer ${adminKey}` : authorization;
      if (auth !== null) headers.authorization = auth;
      const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
    },
  };
}
