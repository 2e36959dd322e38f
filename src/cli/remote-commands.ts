import type { Config } from '../config';
import { DomainError } from '../errors';
import { IngestError } from '../ingest/errors';
import { readInputFiles } from '../ingest/files';
import { SOURCE_FIELDS } from '../ingest/formats';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, SectionInput } from '../ingest/types';
import type { ApiKeyListing, Role } from '../store/keys';
import { printKeyTable } from './keys';
import { remoteGraphQL } from './remote';

/**
 * `dhr keys|stats|ingest --url <server>`: the same commands against a running server's GraphQL
 * API instead of the database, so they work while the server holds the store (an embedded
 * PGlite folder admits one process) and take effect in it at once. Mutations need an admin key
 * (`--key` or DHR_API_KEY).
 */
export interface RemoteTarget {
  url: string;
  apiKey?: string;
}

/** A refused or failed remote call is exit code 1 with the server's message. */
async function remote(command: string, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.error(`${command}: ${error.message} (${error.code})`);
    return 1;
  }
}

const KEY_FIELDS = 'id name role prefix createdAt lastUsedAt revokedAt';
type RemoteKey = Omit<ApiKeyListing, 'id' | 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'role'> & {
  id: string;
  role: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};
const date = (d: string | null) => (d === null ? null : new Date(d));
const listing = (k: RemoteKey): ApiKeyListing => ({
  ...k,
  id: Number(k.id),
  role: k.role.toLowerCase() as Role,
  createdAt: new Date(k.createdAt),
  lastUsedAt: date(k.lastUsedAt),
  revokedAt: date(k.revokedAt),
});

export function remoteCreateKey(target: RemoteTarget, options: { role: string; name?: string }): Promise<number> {
  return remote('keys create', async () => {
    const { createApiKey: created } = await remoteGraphQL<{ createApiKey: { key: string; id: string; name: string; role: string; prefix: string } }>(
      target.url,
      'mutation($role: ApiKeyRole!, $name: String) { createApiKey(role: $role, name: $name) { key id name role prefix } }',
      { role: options.role.toUpperCase(), name: options.name ?? null },
      target,
    );
    console.error(`created ${created.role.toLowerCase()} key ${created.id} "${created.name}" (${created.prefix}…) on ${target.url}; it is shown only now:`);
    console.log(created.key);
    return 0;
  });
}

async function remoteKeys(target: RemoteTarget): Promise<ApiKeyListing[]> {
  const { apiKeys } = await remoteGraphQL<{ apiKeys: RemoteKey[] }>(target.url, `{ apiKeys { ${KEY_FIELDS} } }`, {}, target);
  return apiKeys.map(listing);
}

export function remoteListKeys(target: RemoteTarget): Promise<number> {
  return remote('keys list', async () => printKeyTable(await remoteKeys(target)));
}

/** By id, or by the shown prefix, which must match one key (as `dhr keys revoke` does locally). */
export function remoteRevokeKey(target: RemoteTarget, idOrPrefix: string): Promise<number> {
  return remote('keys revoke', async () => {
    let id = idOrPrefix;
    if (!/^\d+$/.test(idOrPrefix)) {
      const matches = (await remoteKeys(target)).filter((k) => k.prefix.startsWith(idOrPrefix));
      if (matches.length !== 1) {
        console.error(
          matches.length === 0
            ? `keys revoke: no key with id or prefix "${idOrPrefix}"`
            : `keys revoke: "${idOrPrefix}" matches ${matches.length} keys (${matches.map((k) => k.id).join(', ')}); give the id`,
        );
        return 1;
      }
      id = String(matches[0].id);
    }
    const { revokeApiKey: k } = await remoteGraphQL<{ revokeApiKey: RemoteKey }>(
      target.url,
      `mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`,
      { id },
      target,
    );
    console.log(`revoked key ${k.id} "${k.name}" (${k.prefix}…)`);
    return 0;
  });
}

/** `dhr stats --url`: the server's counts, as JSON, like the local command. */
export function remoteStats(target: RemoteTarget): Promise<number> {
  return remote('stats', async () => {
    const data = await remoteGraphQL<{ stats: Record<string, number>; embeddingModels: unknown[] }>(
      target.url,
      '{ stats { documents sections passages links resolvedLinks } embeddingModels { name dimension roles documents passages sentencePassages } }',
      {},
      target,
    );
    console.log(JSON.stringify({ database: 'remote', location: target.url, ...data.stats, models: data.embeddingModels }, null, 2));
    return 0;
  });
}

/** Requests stay well inside the server's MAX_INGEST_BATCH (1000) and MAX_BODY_BYTES (4 MiB) defaults. */
const BATCH_DOCUMENTS = 100;
const BATCH_CHARS = 2 << 20;

interface RemoteOutcome {
  status: string;
  message: string | null;
}

/**
 * `dhr ingest --url`: files are read and checked here (a bad file or document fails alone, as
 * locally), then sent through ingestDocuments in batches; the server embeds them when its
 * EMBED_ON_INGEST is on. Exit code 2 when any document failed.
 */
export function remoteIngest(config: Config, target: RemoteTarget, paths: string[], options: { source?: string }): Promise<number> {
  return remote('ingest', async () => {
    const failures: string[] = [];
    const counts = { created: 0, updated: 0, unchanged: 0, failed: 0, passages: 0, documents: 0 };
    let batch: { origin: string; input: DocumentInput }[] = [];
    let chars = 0;
    const send = async () => {
      if (batch.length === 0) return;
      const { ingestDocuments: r } = await remoteGraphQL<{
        ingestDocuments: { created: number; updated: number; unchanged: number; failed: number; passages: number; outcomes: (RemoteOutcome & { index: number })[] };
      }>(
        target.url,
        'mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created updated unchanged failed passages outcomes { index status message } } }',
        { docs: batch.map((b) => b.input) },
        target,
      );
      for (const name of ['created', 'updated', 'unchanged', 'failed', 'passages'] as const) counts[name] += r[name];
      for (const o of r.outcomes) if (o.status === 'FAILED') failures.push(`${batch[o.index].origin}: ${o.message}`);
      batch = [];
      chars = 0;
    };
    for await (const { origin, input, error } of readInputFiles(paths, config.ingest)) {
      if (!input && !error) continue;
      counts.documents++;
      let failure = error;
      if (input) {
        if (options.source && !input.source) input.source = options.source;
        // Checked here so one bad document fails alone instead of failing its whole request.
        try {
          prepareDocument(input, config.ingest, origin);
        } catch (e) {
          if (!(e instanceof IngestError)) throw e;
          failure = e;
        }
      }
      if (failure || !input) {
        counts.failed++;
        failures.push(`${origin}: ${failure?.message}`);
        continue;
      }
      const document = wireDocument(input);
      const size = JSON.stringify(document).length;
      if (batch.length >= BATCH_DOCUMENTS || (batch.length > 0 && chars + size > BATCH_CHARS)) await send();
      batch.push({ origin, input: document });
      chars += size;
    }
    await send();
    for (const f of failures) console.error(`failed: ${f}`);
    console.log(
      `ingested ${counts.documents} documents on ${target.url}: ${counts.created} created, ${counts.updated} updated, ` +
        `${counts.unchanged} unchanged, ${counts.failed} failed; ${counts.passages} passages written`,
    );
    return counts.failed > 0 ? 2 : 0;
  });
}

/** Only the fields DocumentInput has: GraphQL refuses unknown ones (files may carry more). */
function wireDocument(d: DocumentInput): DocumentInput {
  const pick = <K extends keyof DocumentInput>(k: K) => (d[k] === undefined ? {} : { [k]: d[k] });
  return {
    ...pick('key'),
    ...pick('title'),
    ...pick('abstract'),
    ...Object.assign({}, ...SOURCE_FIELDS.map(pick)),
    ...pick('source'),
    ...pick('metadata'),
    ...(d.sections ? { sections: d.sections.map(wireSection) } : {}),
  };
}

/** Recursion is safe: prepareDocument has bounded the depth (MAX_SECTION_DEPTH). */
function wireSection(s: SectionInput): SectionInput {
  return { title: s.title, ...(s.text === undefined ? {} : { text: s.text }), ...(s.sections ? { sections: s.sections.map(wireSection) } : {}) };
}
