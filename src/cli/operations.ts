import type { Config } from '../config';
import { DomainError, ErrorCode } from '../errors';
import { isRole, ROLES } from '../store/keys';
import { type ServerOptions, type Transport, withTransport } from './transport';

/**
 * The commands that are GraphQL operations and a printer of their result: the same output
 * whether the operation ran in-process on the local store, against `--url`, or against the
 * server holding the store (cli/transport.ts chooses). Refusals are `command: message`, exit code 1.
 */

/** The API's enum value in the store's spelling: QUESTION_DOCUMENT → questionDocument. */
const storeSpelling = (value: string) => value.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const MODEL_FIELDS = 'name dimension runtime source roles documents staleDocuments passages sentencePassages';
const models = (listed: { roles: string[] }[]) => listed.map((m) => ({ ...m, roles: m.roles.map(storeSpelling) }));

const STATS = `{
  stats { documents sections passages links resolvedLinks pending { unindexedPassages unembeddedPassages unembeddedDocuments queued { jobs documents bytes } } bm25Candidates }
  embeddingModels { ${MODEL_FIELDS} }
}`;

/** `dhr stats`: where the store is, its counts, its pending work and its models, as JSON. */
export function statsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'stats', async (t) => {
    const data = await t.request<{ stats: Record<string, unknown>; embeddingModels: { roles: string[] }[] }>(STATS);
    console.log(JSON.stringify({ database: t.database, location: t.location, ...data.stats, models: models(data.embeddingModels) }, null, 2));
    return 0;
  });
}

/** `dhr models [list]`: registered models, their coverage and the roles they serve, as JSON. */
export function listModelsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'models list', async (t) => {
    const data = await t.request<{ embeddingModels: { roles: string[] }[] }>(`{ embeddingModels { ${MODEL_FIELDS} } }`);
    console.log(JSON.stringify(models(data.embeddingModels), null, 2));
    return 0;
  });
}

interface ShownSettings {
  version: number | null;
  setBy: string | null;
  note: string | null;
  evidence: unknown;
  previous: number | null;
  createdAt: string | null;
  modes: { mode: string; parameters: { name: string; value: unknown; source: string }[] }[];
}

/**
 * `dhr settings [show]`: the version in force and every mode's parameters with their source, as
 * JSON (the environment of whoever answers applies: this process's, or the server's).
 */
export function showSettingsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'settings show', async (t) => {
    const { retrievalSettings } = await t.request<{ retrievalSettings: ShownSettings }>(
      '{ retrievalSettings { version setBy note evidence previous createdAt modes { mode parameters { name value source } } } }',
    );
    return printSettings(retrievalSettings);
  });
}

/** The settings as `dhr settings` prints them (after `set` and `rollback` too): each parameter as `value (source)`. */
export function printSettings({ modes, ...version }: Omit<ShownSettings, 'createdAt'> & { createdAt: string | Date | null }): number {
  const shown = Object.fromEntries(
    modes.map((m) => [m.mode, Object.fromEntries(m.parameters.map((p) => [p.name, `${JSON.stringify(p.value)} (${p.source})`]))]),
  );
  console.log(JSON.stringify({ ...version, modes: shown }, null, 2));
  return 0;
}

interface ListedKey {
  id: string;
  name: string;
  role: string;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const KEY_FIELDS = 'id name role prefix createdAt lastUsedAt revokedAt';
const listKeys = async (t: Transport) => (await t.request<{ apiKeys: ListedKey[] }>(`{ apiKeys { ${KEY_FIELDS} } }`)).apiKeys;
/** ` on <server>` after what a command did there; nothing for the local store. */
const on = (t: Transport) => (t.url ? ` on ${t.url}` : '');

/** `dhr keys create`: the plaintext goes to stdout once (and nothing else does); it is not kept. */
export function createKeyCommand(config: Config, options: { role: string; name?: string } & ServerOptions): Promise<number> {
  return withTransport(config, options, 'keys create', async (t) => {
    // A server answers a role it does not know (its ApiKeyRole enum) and an empty name itself.
    if (!t.url && !isRole(options.role)) {
      console.error(`keys create: --role must be one of ${ROLES.join(', ')}`);
      return 1;
    }
    if (!t.url && options.name?.trim() === '') {
      console.error('keys: a key needs a non-empty name');
      return 1;
    }
    const { createApiKey: created } = await t.request<{ createApiKey: { key: string; id: string; name: string; role: string; prefix: string } }>(
      'mutation($role: ApiKeyRole!, $name: String) { createApiKey(role: $role, name: $name) { key id name role prefix } }',
      { role: options.role.toUpperCase(), name: options.name ?? null },
    );
    console.error(`created ${created.role.toLowerCase()} key ${created.id} "${created.name}" (${created.prefix}…)${on(t)}; it is shown only now:`);
    console.log(created.key);
    return 0;
  });
}

/** `dhr keys list`: id, prefix, name, role, created, last used, revoked (never the key), as a table. */
export function listKeysCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'keys list', async (t) => {
    const when = (d: string | null) => (d ? new Date(d).toISOString().replace(/\.\d+Z$/, 'Z') : '-');
    const rows = [
      ['id', 'prefix', 'name', 'role', 'created', 'last used', 'revoked'],
      ...(await listKeys(t)).map((k) => [k.id, k.prefix, k.name, k.role.toLowerCase(), when(k.createdAt), when(k.lastUsedAt), when(k.revokedAt)]),
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
  });
}

/** `dhr keys revoke`: by id, or by the shown prefix, which must match one key. */
export function revokeKeyCommand(config: Config, idOrPrefix: string, options: ServerOptions): Promise<number> {
  const missing = () => {
    console.error(`keys revoke: no key with id or prefix "${idOrPrefix}"`);
    return 1;
  };
  return withTransport(config, options, 'keys revoke', async (t) => {
    let id = String(Number(idOrPrefix));
    if (/^\d+$/.test(idOrPrefix)) {
      if (Number(id) < 1 || Number(id) > 2_147_483_647) return missing();
    } else {
      const matches = (await listKeys(t)).filter((k) => k.prefix.startsWith(idOrPrefix));
      if (matches.length === 0) return missing();
      if (matches.length > 1) {
        console.error(
          `${t.url ? 'keys revoke' : 'keys'}: "${idOrPrefix}" matches ${matches.length} keys (${matches.map((k) => k.id).join(', ')}); give the id`,
        );
        return 1;
      }
      id = matches[0].id;
    }
    try {
      const { revokeApiKey: k } = await t.request<{ revokeApiKey: ListedKey }>(`mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`, { id });
      console.log(`revoked key ${k.id} "${k.name}" (${k.prefix}…)`);
      return 0;
    } catch (error) {
      // A server says which id it lacks (NOT_FOUND); the local store, as for a prefix.
      if (!t.url && error instanceof DomainError && error.code === ErrorCode.NOT_FOUND) return missing();
      throw error;
    }
  });
}
