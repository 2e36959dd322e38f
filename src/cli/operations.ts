import type { Config } from '../config';
import { MAX_DIMENSION } from '../encoders/external';
import { ENCODER_ROLES } from '../encoders/types';
import { badUserInput, DomainError, ErrorCode } from '../errors';
import { enumSpelling } from '../graphql/enum-spelling';
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

const listModels = async (t: Transport) =>
  (await t.request<{ embeddingModels: { roles: string[] }[] }>(`{ embeddingModels { ${MODEL_FIELDS} } }`)).embeddingModels;
const printModels = (listed: { roles: string[] }[]) => {
  console.log(JSON.stringify(models(listed), null, 2));
  return 0;
};

/** `dhr models [list]`: registered models, their coverage and the roles they serve, as JSON. */
export function listModelsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'models list', async (t) => printModels(await listModels(t)));
}

/** `dhr models register-external NAME --dimension N`: prints the models after, as `dhr models list` does. */
export function registerExternalModelCommand(config: Config, name: string, dimension: number, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'models register-external', async (t) => {
    // What GraphQL's Int cannot carry is refused here, in the words the registration uses for a bad dimension.
    if (!Number.isInteger(dimension) || Math.abs(dimension) > 2 ** 31 - 1) {
      throw badUserInput(`dimension must be an integer from 1 to ${MAX_DIMENSION}, got ${dimension}`, 'dimension');
    }
    const { registerExternalEmbeddingModel: m } = await t.request<{ registerExternalEmbeddingModel: { name: string; dimension: number } }>(
      'mutation($name: String!, $dimension: Int!) { registerExternalEmbeddingModel(name: $name, dimension: $dimension) { name dimension } }',
      { name, dimension },
    );
    console.error(
      `registered external model ${m.name} (${m.dimension}-d); its vectors come with ingest (DocumentInput.vector, passages[].vector), questions with retrieve's questionVector`,
    );
    return printModels(await listModels(t));
  });
}

/** `dhr models activate NAME [--roles r,r]` (default: every role); prints the models after. */
export function activateModelCommand(config: Config, name: string, options: { roles?: string } & ServerOptions): Promise<number> {
  const roles = options.roles ? options.roles.split(',') : [...ENCODER_ROLES];
  const unknown = roles.filter((r) => !(ENCODER_ROLES as readonly string[]).includes(r));
  if (unknown.length > 0) throw new Error(`unknown roles ${unknown.join(', ')}; roles are ${ENCODER_ROLES.join(', ')}`);
  return withTransport(config, options, 'models activate', async (t) => {
    const { activateEmbeddingModel: listed } = await t.request<{ activateEmbeddingModel: { roles: string[] }[] }>(
      `mutation($model: String!, $roles: [EncoderRole!]) { activateEmbeddingModel(model: $model, roles: $roles) { ${MODEL_FIELDS} } }`,
      { model: name, roles: roles.map(enumSpelling) },
    );
    console.error(`${name} now serves ${roles.join(', ')}`);
    return printModels(listed);
  });
}

/** `dhr models drop NAME`: a model that serves no role, with its embeddings; prints the models after. */
export function dropModelCommand(config: Config, name: string, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'models drop', async (t) => {
    await t.request('mutation($model: String!) { dropEmbeddingModel(model: $model) }', { model: name });
    console.error(`dropped ${name}`);
    return printModels(await listModels(t));
  });
}

interface ListedAdapter {
  name: string;
  active: boolean;
  dimension: number;
  levels: { level: string; questionModelId: number; questionModel: string; targetModelId: number; targetModel: string }[];
  createdAt: string;
  training: Record<string, unknown>;
}

const ADAPTER_FIELDS = 'name active dimension levels { level questionModelId questionModel targetModelId targetModel } createdAt training';

/** The adapters as `dhr adapters` prints them: the stored record's fields, order and spelling (store/adapters.ts AdapterRow), never the weights. */
function printAdapters(listed: ListedAdapter[]): number {
  const rows = listed.map((a) => ({
    name: a.name,
    active: a.active,
    dimension: a.dimension,
    levels: a.levels.map((l) => storeSpelling(l.level)),
    models: Object.fromEntries(
      a.levels.map((l) => [
        storeSpelling(l.level),
        { questionId: l.questionModelId, question: l.questionModel, targetId: l.targetModelId, target: l.targetModel },
      ]),
    ),
    createdAt: a.createdAt,
    training: a.training,
  }));
  console.log(JSON.stringify(rows, null, 2));
  return 0;
}

/** `dhr adapters [list]`: registered adapters, their base models and training records, as JSON. */
export function listAdaptersCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'adapters list',
    async (t) => printAdapters((await t.request<{ adapters: ListedAdapter[] }>(`{ adapters { ${ADAPTER_FIELDS} } }`)).adapters),
    { label: 'adapters' },
  );
}

/** `dhr adapters activate NAME|none`: the adapter retrieval applies to question vectors from now on (none: no adapter); prints the adapters after. */
export function activateAdapterCommand(config: Config, name: string, options: ServerOptions): Promise<number> {
  const adapter = name === 'none' ? null : name;
  return withTransport(
    config,
    options,
    'adapters activate',
    async (t) => {
      const { activateAdapter: listed } = await t.request<{ activateAdapter: ListedAdapter[] }>(
        `mutation($name: String) { activateAdapter(name: $name) { ${ADAPTER_FIELDS} } }`,
        { name: adapter },
      );
      console.error(adapter ? `adapter ${adapter} is active` : 'no adapter is active');
      return printAdapters(listed);
    },
    { label: 'adapters' },
  );
}

/** `dhr adapters drop NAME`: a registered adapter that is not active; prints the adapters after. */
export function dropAdapterCommand(config: Config, name: string, options: ServerOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'adapters drop',
    async (t) => {
      const { dropAdapter: listed } = await t.request<{ dropAdapter: ListedAdapter[] }>(
        `mutation($name: String!) { dropAdapter(name: $name) { ${ADAPTER_FIELDS} } }`,
        { name },
      );
      console.error(`adapter ${name} dropped`);
      return printAdapters(listed);
    },
    { label: 'adapters' },
  );
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

const SETTINGS_FIELDS = 'version setBy note evidence previous createdAt modes { mode parameters { name value source } }';

/**
 * `dhr settings [show]`: the version in force and every mode's parameters with their source, as
 * JSON (the environment of whoever answers applies: this process's, or the server's).
 */
export function showSettingsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'settings show', async (t) => {
    const { retrievalSettings } = await t.request<{ retrievalSettings: ShownSettings }>(`{ retrievalSettings { ${SETTINGS_FIELDS} } }`);
    return printSettings(retrievalSettings);
  });
}

/** `name=value` as JSON where it parses (numbers, true, false, null), else the text: `documentPassages=top3`. */
export function parseAssignment(assignment: string): [string, unknown] {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw badUserInput(`"${assignment}" is not name=value (e.g. lambda=0.3)`, 'values');
  const name = assignment.slice(0, eq);
  const text = assignment.slice(eq + 1);
  try {
    return [name, JSON.parse(text)];
  } catch {
    return [name, text];
  }
}

/**
 * `dhr settings set --mode M name=value… [--unset name…] [--note T]`: a new version of the
 * corpus's settings (a running server picks it up within a second); prints the settings after,
 * as `dhr settings show` does. Refusals are said under `settings`, as for rollback and history.
 */
export function setSettingsCommand(
  config: Config,
  request: { mode: string; values: string[]; unset: string[]; note?: string },
  options: ServerOptions,
): Promise<number> {
  return withTransport(
    config,
    options,
    'settings set',
    async (t) => {
      // Parsed inside: a malformed assignment is an answer, not a crash.
      const values = Object.fromEntries(request.values.map(parseAssignment));
      const { setRetrievalSettings: version } = await t.request<{ setRetrievalSettings: ShownSettings }>(
        `mutation($mode: RetrievalMode!, $values: JSONObject, $unset: [String!], $note: String) {
          setRetrievalSettings(mode: $mode, values: $values, unset: $unset, note: $note) { ${SETTINGS_FIELDS} }
        }`,
        { mode: request.mode, values, unset: request.unset, note: request.note ?? null },
      );
      return printSettings(version);
    },
    { label: 'settings' },
  );
}

/** `dhr settings rollback`: restores the settings in force before the current version (a new version); prints them. */
export function rollbackSettingsCommand(config: Config, options: ServerOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'settings rollback',
    async (t) => {
      const { rollbackRetrievalSettings: version } = await t.request<{ rollbackRetrievalSettings: ShownSettings }>(
        `mutation { rollbackRetrievalSettings { ${SETTINGS_FIELDS} } }`,
      );
      return printSettings(version);
    },
    { label: 'settings' },
  );
}

/**
 * `dhr settings history [--limit N]`: the stored versions, newest first, each as it was set (the
 * corpus's layer, not the parameters in force), as JSON. Refusals are said under `settings`.
 */
export function settingsHistoryCommand(config: Config, limit: number, options: ServerOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'settings history',
    async (t) => {
      const { retrievalSettingsHistory: versions } = await t.request<{ retrievalSettingsHistory: unknown[] }>(
        'query($first: Int!) { retrievalSettingsHistory(first: $first) { version settings setBy note evidence previous createdAt } }',
        { first: limit },
      );
      console.log(JSON.stringify(versions, null, 2));
      return 0;
    },
    { label: 'settings' },
  );
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

interface Progress {
  done: number;
  total: number;
}

interface ListedTimes {
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt: string;
}

interface ListedJob extends ListedTimes {
  id: string;
  modelId: number;
  model: string;
  scope: string;
  documentIds: string[];
  status: string;
  documents: Progress;
  passages: Progress;
}

interface ListedIngestJob extends ListedTimes {
  id: string;
  status: string;
  documents: Progress;
  passages: { done: number };
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

const TIME_FIELDS = 'error createdAt startedAt finishedAt updatedAt';
const times = (j: ListedTimes): ListedTimes => ({
  error: j.error,
  createdAt: j.createdAt,
  startedAt: j.startedAt,
  finishedAt: j.finishedAt,
  updatedAt: j.updatedAt,
});

/** A re-embedding job as the store lists it (store/jobs.ts JobRow): its fields, order and spelling. */
const jobRow = (j: ListedJob) => ({
  id: Number(j.id),
  modelId: j.modelId,
  model: j.model,
  scope: j.scope,
  documentIds: j.documentIds.map(Number),
  status: j.status.toLowerCase(),
  documentsTotal: j.documents.total,
  documentsDone: j.documents.done,
  passagesTotal: j.passages.total,
  passagesDone: j.passages.done,
  ...times(j),
});

/** An ingest job as the store lists it (store/ingest-jobs.ts ingestJobListing). */
const ingestJobRow = (j: ListedIngestJob) => ({
  id: Number(j.id),
  status: j.status.toLowerCase(),
  documentsTotal: j.documents.total,
  documentsDone: j.documents.done,
  passagesDone: j.passages.done,
  created: j.created,
  updated: j.updated,
  unchanged: j.unchanged,
  failed: j.failed,
  ...times(j),
});

/** `dhr jobs [list] [--ingest] [--status S]`: re-embedding (or ingest) jobs, newest first, as JSON. */
export function listJobsCommand(config: Config, options: { status?: string; ingest?: boolean } & ServerOptions): Promise<number> {
  return withTransport(config, options, 'jobs list', async (t) => {
    const variables = { status: options.status?.toUpperCase() ?? null };
    const rows = options.ingest
      ? (
          await t.request<{ ingestJobs: ListedIngestJob[] }>(
            `query($status: JobStatus) { ingestJobs(status: $status) { id status documents { done total } passages { done } created updated unchanged failed ${TIME_FIELDS} } }`,
            variables,
          )
        ).ingestJobs.map(ingestJobRow)
      : (
          await t.request<{ jobs: ListedJob[] }>(
            `query($status: JobStatus) { jobs(status: $status) { id modelId model scope documentIds status documents { done total } passages { done total } ${TIME_FIELDS} } }`,
            variables,
          )
        ).jobs.map(jobRow);
    console.log(JSON.stringify(rows, null, 2));
    return 0;
  });
}

/**
 * `dhr jobs cancel [--ingest] ID`: stops a queued or running job. A refusal (no such job, one
 * already ended) is its message alone, as it has always been for this command.
 */
export function cancelJobCommand(config: Config, id: number, options: { ingest?: boolean } & ServerOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'jobs cancel',
    async (t) => {
      const mutation = options.ingest ? 'cancelIngestJob' : 'cancelJob';
      const { cancelled } = await t.request<{ cancelled: { id: string; status: string } }>(
        `mutation($id: ID!) { cancelled: ${mutation}(id: $id) { id status } }`,
        { id: String(id) },
      );
      console.log(`${options.ingest ? 'ingest job' : 'job'} ${cancelled.id} ${cancelled.status.toLowerCase()}`);
      return 0;
    },
    { answer: false },
  );
}
