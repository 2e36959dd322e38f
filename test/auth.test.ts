import { getMetadataStorage } from 'type-graphql';
import { loadConfig } from '../src/config';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { startServer } from '../src/server';
import { createApiKey, revokeApiKey, type CreatedApiKey } from '../src/store/keys';
import { createTestApi, TEST_ADMIN, type TestApi } from './helpers/api';
import { useTestDatabase } from './helpers/database';
import { captureLog } from './helpers/log-capture';

const INGEST = `mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created outcomes { documentId } } }`;
const DELETE = `mutation($id: ID!) { deleteDocument(id: $id) }`;
const READ = `{ stats { documents } }`;

interface Reply {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
  text: string;
}

/** A POST over real HTTP with an optional Authorization header value. */
async function post(url: string, authorization: string | undefined, query: string, variables?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization !== undefined) headers.authorization = authorization;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

const codeOf = (r: Reply) => r.body.errors?.[0]?.extensions?.code;
const bearer = (k: CreatedApiKey) => `Bearer ${k.key}`;

describe('access control over HTTP', () => {
  const t = useTestDatabase();
  let admin: CreatedApiKey;
  let reader: CreatedApiKey;
  let revoked: CreatedApiKey;
  let publicUrl: string;
  let keyUrl: string;
  const stops: (() => Promise<void>)[] = [];
  const logged: string[] = [];
  // The servers' JSON log (pino writes it to its destination, not through console).
  const serverLog = captureLog();
  const spies: jest.SpyInstance[] = [];

  beforeAll(async () => {
    for (const method of ['log', 'error', 'warn', 'info', 'debug'] as const) {
      const original = console[method].bind(console);
      spies.push(
        jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
          logged.push(args.map(String).join(' '));
          original(...args);
        }),
      );
    }
    admin = await createApiKey(t.db, { role: 'admin', name: 'ops' });
    reader = await createApiKey(t.db, { role: 'reader', name: 'app' });
    revoked = await createApiKey(t.db, { role: 'admin', name: 'old' });
    await revokeApiKey(t.db, String(revoked.id));
    const open = await startServer(t.db, loadConfig({ PORT: '0' }), undefined, { logDestination: serverLog.destination });
    const closed = await startServer(t.db, loadConfig({ PORT: '0', READ_ACCESS: 'key' }), undefined, { logDestination: serverLog.destination });
    publicUrl = open.url;
    keyUrl = closed.url;
    stops.push(open.stop, closed.stop);
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    for (const spy of spies) spy.mockRestore();
  });

  describe('READ_ACCESS=public (default)', () => {
    it('lets anyone read', async () => {
      const r = await post(publicUrl, undefined, READ);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: { stats: { documents: 0 } } });
    });

    it('refuses admin mutations without a key: UNAUTHENTICATED, nothing written', async () => {
      const r = await post(publicUrl, undefined, INGEST, { d: [{ title: 'Anon', text: 'x' }] });
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('UNAUTHENTICATED');
      expect(r.body.errors![0].message).toMatch(/ingestDocuments needs an API key with the admin role.*Authorization: Bearer/);
      expect(r.body.data).toBeNull();
      const d = await post(publicUrl, undefined, DELETE, { id: '1' });
      expect(codeOf(d)).toBe('UNAUTHENTICATED');
      expect((await post(publicUrl, undefined, READ)).body.data.stats.documents).toBe(0);
    });

    it('refuses admin mutations with a reader key: FORBIDDEN naming the roles', async () => {
      const r = await post(publicUrl, bearer(reader), INGEST, { d: [{ title: 'Reader', text: 'x' }] });
      expect(r.status).toBe(403);
      expect(codeOf(r)).toBe('FORBIDDEN');
      expect(r.body.errors![0].message).toBe('ingestDocuments needs the admin role; key "app" has the reader role');
      expect(r.text).not.toContain(reader.key);
      const d = await post(publicUrl, bearer(reader), DELETE, { id: '1' });
      expect(codeOf(d)).toBe('FORBIDDEN');
      expect((await post(publicUrl, bearer(reader), READ)).body).toEqual({ data: { stats: { documents: 0 } } });
    });

    it('runs admin mutations with an admin key', async () => {
      const r = await post(publicUrl, bearer(admin), INGEST, { d: [{ title: 'Admin', text: 'Written.' }] });
      expect(r.body.errors).toBeUndefined();
      expect(r.body.data.ingestDocuments.created).toBe(1);
      const id = String(r.body.data.ingestDocuments.outcomes[0].documentId);
      // The header's scheme is case-insensitive.
      const d = await post(publicUrl, `bearer ${admin.key}`, DELETE, { id });
      expect(d.body).toEqual({ data: { deleteDocument: true } });
    });

    it('refuses a revoked or unknown key even for reads: 401 UNAUTHENTICATED without echoing the key', async () => {
      const unknown = `dhr_${'x'.repeat(43)}`;
      for (const key of [revoked.key, unknown]) {
        for (const query of [READ, INGEST]) {
          const r = await post(publicUrl, `Bearer ${key}`, query, { d: [{ title: 'No', text: 'x' }] });
          expect(r.status).toBe(401);
          expect(codeOf(r)).toBe('UNAUTHENTICATED');
          expect(r.body.errors![0].message).toBe('the API key is unknown or revoked');
          expect(r.text).not.toContain(key);
        }
      }
    });

    it('refuses a malformed Authorization header: 401 UNAUTHENTICATED', async () => {
      for (const header of [`Basic ${admin.key}`, 'Bearer', `Bearer ${admin.key} extra`, admin.key]) {
        const r = await post(publicUrl, header, READ);
        expect(r.status).toBe(401);
        expect(codeOf(r)).toBe('UNAUTHENTICATED');
        expect(r.body.errors![0].message).toBe('the Authorization header must be "Bearer <key>"');
        expect(r.text).not.toContain(admin.key);
      }
    });
  });

  describe('READ_ACCESS=key', () => {
    it('refuses every operation without a key, queries and introspection included', async () => {
      for (const query of [READ, '{ __schema { queryType { name } } }', INGEST]) {
        const r = await post(keyUrl, undefined, query, { d: [{ title: 'No', text: 'x' }] });
        expect(r.status).toBe(401);
        expect(codeOf(r)).toBe('UNAUTHENTICATED');
        expect(r.body.errors![0].message).toMatch(/needs an API key for every request \(READ_ACCESS=key\)/);
      }
    });

    it('lets a reader key read but not write, and an admin key do both', async () => {
      expect((await post(keyUrl, bearer(reader), READ)).body).toEqual({ data: { stats: { documents: 0 } } });
      expect(codeOf(await post(keyUrl, bearer(reader), INGEST, { d: [{ title: 'R', text: 'x' }] }))).toBe('FORBIDDEN');
      expect((await post(keyUrl, bearer(admin), READ)).body).toEqual({ data: { stats: { documents: 0 } } });
      const r = await post(keyUrl, bearer(admin), INGEST, { d: [{ title: 'Keyed', text: 'x' }] });
      expect(r.body.data.ingestDocuments.created).toBe(1);
      expect(codeOf(await post(keyUrl, `Bearer ${revoked.key}`, READ))).toBe('UNAUTHENTICATED');
    });
  });

  it('never logs a key', () => {
    // Every request was logged (one line each), none with a key in it.
    expect(serverLog.lines.filter((l) => l.msg === 'request').length).toBeGreaterThan(5);
    for (const key of [admin.key, reader.key, revoked.key]) {
      for (const text of [logged.join('\n'), serverLog.text()]) {
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice(10));
      }
    }
  });
});

describe('access control in the schema (executeOperation)', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi({}, undefined, { principal: null });
  });
  afterAll(() => api.close());

  it('checks the role on both admin mutations for every kind of principal', async () => {
    const reader = { keyId: 2, role: 'reader' as const, name: 'app' };
    for (const [principal, expected] of [
      [null, 'UNAUTHENTICATED'],
      [reader, 'FORBIDDEN'],
    ] as const) {
      const i = await api.execAs(principal, INGEST, { d: [{ title: 'T', text: 'x' }] });
      expect(i.errors?.[0].extensions?.code).toBe(expected);
      const d = await api.execAs(principal, DELETE, { id: '1' });
      expect(d.errors?.[0].extensions?.code).toBe(expected);
    }
    // exec acts as the principal the API was made with: none here.
    expect((await api.exec(INGEST, { d: [{ title: 'T', text: 'x' }] })).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const i = await api.execAs(TEST_ADMIN, INGEST, { d: [{ title: 'T', text: 'x' }] });
    expect(i.data?.ingestDocuments.created).toBe(1);
    const id = String(i.data?.ingestDocuments.outcomes[0].documentId);
    expect((await api.execAs(TEST_ADMIN, DELETE, { id })).data).toEqual({ deleteDocument: true });
    expect((await api.execAs(null, READ)).data).toEqual({ stats: { documents: 0 } });
  });

  it('with READ_ACCESS=key refuses an anonymous query and runs a reader one', async () => {
    const closed = await createTestApi({ READ_ACCESS: 'key' });
    try {
      expect((await closed.execAs(null, READ)).errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
      expect((await closed.execAs({ keyId: 2, role: 'reader', name: 'app' }, READ)).data).toEqual({ stats: { documents: 0 } });
      // The default test principal is an admin, so existing tests keep working unchanged.
      expect((await closed.exec(READ)).data).toEqual({ stats: { documents: 0 } });
    } finally {
      await closed.close();
    }
  });
});

describe('every mutation', () => {
  it("needs the admin role: a new mutation without @Authorized<Role>('admin') fails here", async () => {
    const schema = await buildGraphQLSchema();
    const names = Object.keys(schema.getMutationType()!.getFields()).sort();
    expect(names).toEqual(expect.arrayContaining(['deleteDocument', 'ingestDocuments']));
    const roles = new Map(getMetadataStorage().mutations.map((m) => [m.schemaName, m.roles]));
    for (const name of names) expect({ name, roles: roles.get(name) }).toEqual({ name, roles: ['admin'] });
  });
});

describe('READ_ACCESS setting', () => {
  it('accepts public or key and refuses anything else', () => {
    expect(loadConfig({}).readAccess).toBe('public');
    expect(loadConfig({ READ_ACCESS: 'key' }).readAccess).toBe('key');
    expect(() => loadConfig({ READ_ACCESS: 'open' })).toThrow('READ_ACCESS must be one of public, key, got "open"');
  });
});
