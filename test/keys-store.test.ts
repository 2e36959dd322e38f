import { announceKeys } from '../src/cli/keys';
import { authenticateKey, createApiKey, hashApiKey, hasAdminKey, listApiKeys, revokeApiKey } from '../src/store/keys';
import { useTestDatabase } from './helpers/database';

describe('API key store', () => {
  const t = useTestDatabase({ each: true });

  it('creates keys in the dhr_ format and stores only their SHA-256', async () => {
    const created = await createApiKey(t.db, { role: 'admin', name: 'ops' });
    expect(created.key).toMatch(/^dhr_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 10));
    const rows = await t.db.query<Record<string, unknown>>('SELECT * FROM api_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toBe(hashApiKey(created.key));
    // The plaintext is nowhere in the row.
    expect(JSON.stringify(rows)).not.toContain(created.key);
    expect(JSON.stringify(rows)).not.toContain(created.key.slice(10));
    const other = await createApiKey(t.db, { role: 'admin', name: 'ops' });
    expect(other.key).not.toBe(created.key);
  });

  it('authenticates a valid key, notes its use, and refuses unknown, malformed and revoked keys', async () => {
    const admin = await createApiKey(t.db, { role: 'admin', name: 'ops' });
    const reader = await createApiKey(t.db, { role: 'reader', name: 'app' });
    expect(await authenticateKey(t.db, admin.key)).toEqual({ keyId: admin.id, role: 'admin', name: 'ops' });
    expect(await authenticateKey(t.db, reader.key)).toEqual({ keyId: reader.id, role: 'reader', name: 'app' });
    expect((await listApiKeys(t.db)).find((k) => k.id === admin.id)?.lastUsedAt).toBeInstanceOf(Date);

    const unknown = `dhr_${'A'.repeat(43)}`;
    expect(await authenticateKey(t.db, unknown)).toBeUndefined();
    expect(await authenticateKey(t.db, 'not-a-key')).toBeUndefined();
    expect(await authenticateKey(t.db, admin.key.slice(0, -1))).toBeUndefined();

    expect((await revokeApiKey(t.db, String(admin.id)))?.revokedAt).toBeInstanceOf(Date);
    expect(await authenticateKey(t.db, admin.key)).toBeUndefined();
    expect(await authenticateKey(t.db, reader.key)).toBeDefined();
  });

  it('lists keys without hashes and revokes by id or unique prefix', async () => {
    const a = await createApiKey(t.db, { role: 'admin', name: 'first' });
    const b = await createApiKey(t.db, { role: 'reader', name: 'second' });
    const listed = await listApiKeys(t.db);
    expect(listed.map((k) => [k.id, k.name, k.role, k.prefix, k.revokedAt])).toEqual([
      [a.id, 'first', 'admin', a.prefix, null],
      [b.id, 'second', 'reader', b.prefix, null],
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/hash|[0-9a-f]{64}/);
    expect(await hasAdminKey(t.db)).toBe(true);

    expect(await revokeApiKey(t.db, '999')).toBeUndefined();
    await expect(revokeApiKey(t.db, 'dhr_')).rejects.toThrow(/matches 2 keys/);
    expect((await revokeApiKey(t.db, a.prefix))?.id).toBe(a.id);
    const firstTime = (await listApiKeys(t.db))[0].revokedAt;
    await revokeApiKey(t.db, a.prefix);
    expect((await listApiKeys(t.db))[0].revokedAt).toEqual(firstTime);
    expect(await hasAdminKey(t.db)).toBe(false);
  });

  it('refuses an unknown role at the API and in the table', async () => {
    await expect(createApiKey(t.db, { role: 'root' as 'admin', name: 'x' })).rejects.toThrow(/role must be one of admin, reader/);
    await expect(t.db.query("INSERT INTO api_keys (name, role, key_hash, key_prefix) VALUES ('x', 'root', 'h', 'p')")).rejects.toThrow(/check constraint/);
  });

  it('at start says how to make an admin key when there is none, and makes one in demo mode', async () => {
    const said: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void said.push(args.join(' ')));
    try {
      await announceKeys(t.db, false, 'http://x/');
      expect(said).toEqual([expect.stringMatching(/no admin API key yet.*dhr keys create --role admin/)]);
      await announceKeys(t.db, true, 'http://x/');
      const [key] = (await listApiKeys(t.db)).filter((k) => k.name === 'demo');
      expect(key.role).toBe('admin');
      expect(said[1]).toMatch(new RegExp(`demo admin key.*${key.prefix}[\\s\\S]*curl http://x/ .*Authorization: Bearer ${key.prefix}`));
      said.length = 0;
      await announceKeys(t.db, false, 'http://x/');
      expect(said).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });
});
