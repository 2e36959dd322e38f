import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remoteGraphQL } from '../src/cli/remote';
import { DomainError } from '../src/errors';
import { dhr } from './helpers/cli';
import { useTestServer } from './helpers/server';

/** Keys made and revoked while the server runs, and the CLI talking to a running server. */
describe('API keys over GraphQL and the CLI with --url', () => {
  const server = useTestServer();
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'dhr-remote-'));
  });
  afterAll(() => rm(work, { recursive: true, force: true }));

  const KEYS = `{ apiKeys { id name role prefix revokedAt } }`;
  const asKey = (key: string) => `Bearer ${key}`;

  it('createApiKey, apiKeys and revokeApiKey take effect with the next request', async () => {
    const created = (await server.post(`mutation { createApiKey(role: READER, name: "webapp") { key id name role prefix } }`)).body.data.createApiKey;
    expect(created).toMatchObject({ name: 'webapp', role: 'READER', key: expect.stringMatching(/^dhr_[A-Za-z0-9_-]{43}$/) });
    expect(created.key.startsWith(created.prefix)).toBe(true);

    // Listed without the key; a reader may read but not list keys nor make them.
    const listed = (await server.post(KEYS)).body.data.apiKeys;
    expect(listed).toContainEqual({ id: created.id, name: 'webapp', role: 'READER', prefix: created.prefix, revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect((await server.post(`{ stats { documents } }`, undefined, asKey(created.key))).body.data.stats.documents).toBe(0);
    expect((await server.post(KEYS, undefined, asKey(created.key))).body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await server.post(KEYS, undefined, null)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await server.post(`mutation { createApiKey(role: ADMIN) { key } }`, undefined, asKey(created.key))).body.errors[0].extensions.code).toBe(
      'FORBIDDEN',
    );

    const revoked = (await server.post(`mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, { id: created.id })).body.data.revokeApiKey;
    expect(revoked.revokedAt).not.toBeNull();
    const refused = await server.post(`{ stats { documents } }`, undefined, asKey(created.key));
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    const missing = await server.post(`mutation { revokeApiKey(id: "999999") { id } }`);
    expect(missing.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', argument: 'id' });
    const unnamed = await server.post(`mutation { createApiKey(role: ADMIN, name: "  ") { key } }`);
    expect(unnamed.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'name' });
  });

  it('remoteGraphQL returns data, and throws the first error as a DomainError with its code', async () => {
    const data = await remoteGraphQL<{ stats: { documents: number } }>(
      server.url,
      `query($n: Int) { stats { documents } documents(first: $n) { totalCount } }`,
      { n: 1 },
    );
    expect(data.stats.documents).toEqual(expect.any(Number));
    await expect(remoteGraphQL(server.url, `{ document(id: "x") { id } }`)).rejects.toMatchObject({ code: 'BAD_USER_INPUT', argument: 'id' });
    await expect(remoteGraphQL(server.url, KEYS, {}, { apiKey: 'dhr_nope' })).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
    const refused = await remoteGraphQL(server.url, KEYS).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).message).toMatch(/apiKeys needs an API key/);
    await expect(remoteGraphQL('http://127.0.0.1:1/', KEYS)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('cannot reach the server at http://127.0.0.1:1/'),
    });
  });

  it('dhr keys create|list|revoke --url manage keys of the running server', async () => {
    const env = { DHR_API_KEY: server.adminKey };
    const made = await dhr(['keys', 'create', '--role', 'admin', '--name', 'remote-ops', '--url', server.url], env);
    expect(made.stderr).toContain('created admin key');
    expect(made.code).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^dhr_[A-Za-z0-9_-]{43}$/);
    // The new key works at once, with no restart.
    expect((await server.post(KEYS, undefined, asKey(key))).body.data.apiKeys).toContainEqual(expect.objectContaining({ name: 'remote-ops', role: 'ADMIN' }));

    const listed = await dhr(['keys', 'list', '--url', server.url, '--key', key], {});
    expect(listed.code).toBe(0);
    const row = listed.stdout.split('\n').find((line) => line.includes('remote-ops'));
    expect(row).toMatch(/^\d+\s+dhr_\S+\s+remote-ops\s+admin\s+\d{4}-/);
    expect(listed.stdout).not.toContain(key);

    const prefix = row!.split(/\s+/)[1];
    const revoked = await dhr(['keys', 'revoke', prefix, '--url', server.url], env);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('revoked key');
    const refused = await server.post(KEYS, undefined, asKey(key));
    expect(refused.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    // Without a key the server refuses, and the CLI says so.
    const anonymous = await dhr(['keys', 'create', '--role', 'reader', '--url', server.url], {});
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toMatch(/keys create: createApiKey needs an API key.*UNAUTHENTICATED/);
  });

  it('dhr ingest --url makes documents searchable; dhr stats --url prints the counts', async () => {
    const env = { DHR_API_KEY: server.adminKey };
    await writeFile(join(work, 'tides.md'), '# Tides\n\nThe moon pulls the oceans, which makes the tides rise and fall twice a day.\n');
    await writeFile(join(work, 'bad.json'), JSON.stringify({ key: 'bad', title: 'Bad', text: 'nul \u0000 here' }));
    const ingested = await dhr(['ingest', join(work, 'tides.md'), join(work, 'bad.json'), '--source', 'remote-test', '--url', server.url], env);
    expect(ingested.stdout).toContain('1 created');
    expect(ingested.stdout).toContain('1 failed');
    expect(ingested.stderr).toMatch(/failed: .*bad\.json.*NUL/);
    expect(ingested.code).toBe(2);

    const found = await server.post(`{ retrieve(question: "why do tides rise", mode: LEXICAL, k2: 3) { passages { passage { document { title source } } } } }`);
    expect(found.body.data.retrieve.passages[0].passage.document).toEqual({ title: 'Tides', source: 'remote-test' });

    const stats = await dhr(['stats', '--url', server.url], {});
    expect(stats.code).toBe(0);
    const counts = JSON.parse(stats.stdout);
    const direct = (await server.post(`{ stats { documents passages } }`)).body.data.stats;
    expect(counts).toMatchObject({ database: 'remote', location: server.url, documents: direct.documents, passages: direct.passages });
    expect(counts.documents).toBeGreaterThanOrEqual(1);

    const unreachable = await dhr(['stats', '--url', 'http://127.0.0.1:1/'], {});
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the server at http://127.0.0.1:1/');
  });
});
