import type { Config } from '../config';
import type { Database } from '../store/db';
import { ApiKeyError, createApiKey, hasAdminKey, isRole, listApiKeys, revokeApiKey, ROLES, type ApiKeyListing } from '../store/keys';
import { openMigratedDatabase } from '../store/open';

/** Opens the store for one keys command; a refused request (ApiKeyError) is exit code 1. */
async function withKeys(config: Config, fn: (db: Database) => Promise<number>): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    return await fn(db);
  } catch (error) {
    if (!(error instanceof ApiKeyError)) throw error;
    console.error(`keys: ${error.message}`);
    return 1;
  } finally {
    await db.close();
  }
}

/** `dhr keys create`: the only way keys are made; the plaintext goes to stdout once and is not kept. */
export function createKeyCommand(config: Config, options: { role: string; name?: string }): Promise<number> {
  return withKeys(config, async (db) => {
    if (!isRole(options.role)) {
      console.error(`keys create: --role must be one of ${ROLES.join(', ')}`);
      return 1;
    }
    const created = await createApiKey(db, { role: options.role, name: options.name ?? options.role });
    console.error(`created ${created.role} key ${created.id} "${created.name}" (${created.prefix}…); it is shown only now:`);
    console.log(created.key);
    return 0;
  });
}

export function listKeysCommand(config: Config): Promise<number> {
  return withKeys(config, async (db) => printKeyTable(await listApiKeys(db)));
}

export function revokeKeyCommand(config: Config, idOrPrefix: string): Promise<number> {
  return withKeys(config, async (db) => {
    const revoked = await revokeApiKey(db, idOrPrefix);
    if (!revoked) {
      console.error(`keys revoke: no key with id or prefix "${idOrPrefix}"`);
      return 1;
    }
    console.log(`revoked key ${revoked.id} "${revoked.name}" (${revoked.prefix}…)`);
    return 0;
  });
}

/** The `keys list` table (also for `--url`). */
export function printKeyTable(keys: ApiKeyListing[]): number {
  const when = (d: Date | null) => (d ? d.toISOString().replace(/\.\d+Z$/, 'Z') : '-');
  const rows = [
    ['id', 'prefix', 'name', 'role', 'created', 'last used', 'revoked'],
    ...keys.map((k) => [String(k.id), k.prefix, k.name, k.role, when(k.createdAt), when(k.lastUsedAt), when(k.revokedAt)]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
  return 0;
}

/**
 * At server start: --demo makes a fresh admin key so every mutation can be tried from the
 * README; otherwise, when no admin key exists, say how to make one. Goes to stderr, as the
 * rest of the start-up report does.
 */
export async function announceKeys(db: Database, demo: boolean, url: string): Promise<void> {
  if (demo) {
    const { key } = await createApiKey(db, { role: 'admin', name: 'demo' });
    console.error(
      `demo admin key (new at every start; revoke old ones with \`dhr keys revoke\`): ${key}\n` +
        `  curl ${url} -H 'content-type: application/json' -H 'Authorization: Bearer ${key}' -d '{"query":"mutation { … }"}'`,
    );
  } else if (!(await hasAdminKey(db))) {
    console.error('no admin API key yet: mutations will answer UNAUTHENTICATED; create one with `dhr keys create --role admin`');
  }
}
