import { parseArgs } from 'node:util';
import type { Config } from '../config';
import type { Database } from '../store/db';
import { ApiKeyError, createApiKey, hasAdminKey, isRole, listApiKeys, revokeApiKey, ROLES, type ApiKeyListing } from '../store/keys';
import { openMigratedDatabase } from '../store/open';

export const KEYS_USAGE = `  keys create --role admin|reader [--name N]
                                create an API key; prints the key (once) and nothing else on stdout
  keys list                     id, prefix, name, role, created, last used, revoked (never the key)
  keys revoke <id|prefix>       revoke a key at once`;

/** `dhr keys …`: the only way keys are made; the plaintext goes to stdout once and is not kept. */
export async function keysCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const db = await openMigratedDatabase(config);
  try {
    switch (sub) {
      case 'create':
        return await create(db, rest);
      case 'list':
        return list(await listApiKeys(db));
      case 'revoke':
        return await revoke(db, rest);
      default:
        console.error(`keys: unknown subcommand "${sub ?? ''}"\n\n${KEYS_USAGE}`);
        return 1;
    }
  } catch (error) {
    if (!(error instanceof ApiKeyError)) throw error;
    console.error(`keys: ${error.message}`);
    return 1;
  } finally {
    await db.close();
  }
}

async function create(db: Database, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { role: { type: 'string' }, name: { type: 'string' } } });
  if (!values.role || !isRole(values.role)) {
    console.error(`keys create: --role must be one of ${ROLES.join(', ')}`);
    return 1;
  }
  const created = await createApiKey(db, { role: values.role, name: values.name ?? values.role });
  console.error(`created ${created.role} key ${created.id} "${created.name}" (${created.prefix}…); it is shown only now:`);
  console.log(created.key);
  return 0;
}

function list(keys: ApiKeyListing[]): number {
  const when = (d: Date | null) => (d ? d.toISOString().replace(/\.\d+Z$/, 'Z') : '-');
  const rows = [
    ['id', 'prefix', 'name', 'role', 'created', 'last used', 'revoked'],
    ...keys.map((k) => [String(k.id), k.prefix, k.name, k.role, when(k.createdAt), when(k.lastUsedAt), when(k.revokedAt)]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
  return 0;
}

async function revoke(db: Database, args: string[]): Promise<number> {
  if (args.length !== 1) {
    console.error('keys revoke: give one key id or prefix');
    return 1;
  }
  const revoked = await revokeApiKey(db, args[0]);
  if (!revoked) {
    console.error(`keys revoke: no key with id or prefix "${args[0]}"`);
    return 1;
  }
  console.log(`revoked key ${revoked.id} "${revoked.name}" (${revoked.prefix}…)`);
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
