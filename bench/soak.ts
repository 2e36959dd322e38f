/**
 * npm run soak — a long mixed load on a running server, then a consistency check of the store.
 *
 * SOAK_CLIENTS (16) clients for SOAK_MINUTES (10) each loop over: retrieve (60%: default mode,
 * k1 = 100, k2 = 20), navigation (25%: a page of documents, then one document's table of contents,
 * sections and passages), ingest (15%: one to three documents; a third of them re-write a key the
 * client wrote before, with new content). Afterwards, through SQL: every acknowledged key is
 * present exactly once, with the passage count its last acknowledged write reported, and nothing is
 * pending (src/store/pending.ts pendingWork: every passage indexed and embedded for the active
 * models; also checked from the rows directly).
 *
 * Server: SOAK_URL and SOAK_KEY (an admin key) to target a running server whose database is
 * DATABASE_URL; unset, the soak starts `dhr serve` itself on a fresh database `dhr_soak` of
 * DATABASE_URL's server (default postgresql://postgres@127.0.0.1:5432/postgres) with a tiny 64-d
 * test model (test/helpers/tiny-model.ts) and rate limits off.
 */
import 'reflect-metadata';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey } from '../src/store/keys';
import { migrate } from '../src/store/migrate';
import { pendingWork } from '../src/store/pending';
import { PostgresDatabase } from '../src/store/postgres';
import { prng } from '../test/helpers/prng';
import { inheritedEnv, startServe, type ServeProcess } from '../test/helpers/serve';
import { writeTinyModel } from '../test/helpers/tiny-model';
import { WORDS } from '../test/helpers/tiny-tokenizer';
import { databaseUrl, openBenchDatabase } from './database';

const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 16);
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const TEXT_WORDS = WORDS.filter((w) => /^[a-z]+$/.test(w));

type Kind = 'retrieve' | 'navigate' | 'ingest';

async function startOwnServer(): Promise<{ url: string; key: string; dbUrl: string; child: ServeProcess['child'] }> {
  const work = mkdtempSync(join(tmpdir(), 'dhr-soak-'));
  const modelDir = await writeTinyModel(work, 'soak-tiny-64', { hidden: 64 });
  await (await openBenchDatabase(baseUrl, 'dhr_soak', true)).close();
  const dbUrl = databaseUrl(baseUrl, 'dhr_soak');
  const { child, url } = await startServe({
    ...inheritedEnv(),
    DATABASE_URL: dbUrl,
    ENCODER: modelDir,
    RATE_LIMIT_QUERIES: '0',
    RATE_LIMIT_MUTATIONS: '0',
    ENCODER_THREADS: '1',
  });
  const db = new PostgresDatabase({ url: dbUrl, maxConnections: 1 });
  try {
    await migrate(db);
    const { key } = await createApiKey(db, { role: 'admin', name: 'soak' });
    return { url, key, dbUrl, child };
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  const own = process.env.SOAK_URL ? undefined : await startOwnServer();
  const url = own?.url ?? process.env.SOAK_URL!;
  const key = own?.key ?? process.env.SOAK_KEY ?? '';
  const dbUrl = own?.dbUrl ?? baseUrl;

  const gql = async (query: string, variables: Record<string, unknown> = {}, admin = false) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(admin ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await res.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
    if (!res.ok || body.errors) throw new Error(`HTTP ${res.status}: ${body.errors?.map((e) => e.extensions?.code ?? e.message).join(', ')}`);
    return body.data;
  };

  const latencies: Record<Kind, number[]> = { retrieve: [], navigate: [], ingest: [] };
  const errors: Record<string, number> = {};
  /** Last acknowledged passage count per key. */
  const acknowledged = new Map<string, number>();
  const end = Date.now() + MINUTES * 60_000;
  let raced = 0;

  const client = async (c: number) => {
    const rand = prng(1000 + c);
    const words = (n: number) => Array.from({ length: n }, () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)]).join(' ');
    const mine: string[] = [];
    let n = 0;
    while (Date.now() < end) {
      const r = rand();
      const kind: Kind = r < 0.6 ? 'retrieve' : r < 0.85 ? 'navigate' : 'ingest';
      const t = process.hrtime.bigint();
      try {
        if (kind === 'retrieve') {
          const answer = await gql('query($q: String!) { retrieve(question: $q, k1: 100, k2: 20) { passages { rank passage { id } } warnings } }', {
            q: `${words(4)} soak${c}`,
          });
          // A passage re-written between the search and its fields is left out with a warning (src/graphql/resolvers/retrieval.ts).
          if ((answer.retrieve.warnings as string[]).some((w) => w.includes('removed or replaced'))) raced++;
        } else if (kind === 'navigate') {
          const page = await gql('{ documents(first: 5) { edges { node { id } } } }');
          const id = page.documents.edges[Math.floor(rand() * page.documents.edges.length)]?.node.id;
          if (id) await gql('query($id: ID!) { document(id: $id) { title toc { title } sections { title passages { id text } } } }', { id });
        } else {
          const docs = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
            const rewrite = mine.length > 0 && rand() < 1 / 3;
            const k = rewrite ? mine[Math.floor(rand() * mine.length)] : `soak/${c}/${n++}`;
            if (!rewrite) mine.push(k);
            return {
              key: k,
              title: `${words(3)} ${k}`,
              abstract: `${words(15)}.`,
              sections: Array.from({ length: 1 + Math.floor(rand() * 4) }, () => ({ title: words(2), text: `${words(30 + Math.floor(rand() * 120))}.` })),
            };
          });
          // One key twice in a batch is written in batch order: the last one stands.
          const result = await gql(
            'mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { failed outcomes { key status passages } } }',
            { docs },
            true,
          );
          if (result.ingestDocuments.failed > 0) throw new Error('ingest: failed outcomes');
          for (const o of result.ingestDocuments.outcomes) acknowledged.set(o.key, o.passages);
        }
        latencies[kind].push(Number(process.hrtime.bigint() - t) / 1e6);
      } catch (error) {
        const label = `${kind}: ${error instanceof Error ? error.message : String(error)}`;
        errors[label] = (errors[label] ?? 0) + 1;
      }
    }
  };

  const started = Date.now();
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  const seconds = (Date.now() - started) / 1000;

  // Consistency, from the rows.
  const db = new PostgresDatabase({ url: dbUrl, maxConnections: 1 });
  try {
    const rows = await db.query<{ key: string; n: number; passages: number }>(
      `SELECT d.key, count(*) OVER (PARTITION BY d.key)::int AS n, (SELECT count(*)::int FROM passages p WHERE p.document_id = d.id) AS passages
       FROM documents d WHERE d.key LIKE 'soak/%'`,
    );
    const stored = new Map(rows.map((r) => [r.key, r]));
    const absent = [...acknowledged.keys()].filter((k) => !stored.has(k));
    const duplicated = rows.filter((r) => r.n !== 1).length;
    const wrongPassages = [...acknowledged].filter(([k, p]) => stored.get(k) && stored.get(k)!.passages !== p).length;
    const pending = await pendingWork(db);
    const [direct] = await db.query<{ unindexed: number; unembedded: number }>(
      `SELECT (SELECT count(*)::int FROM passages WHERE search IS NULL) AS unindexed,
              (SELECT count(*)::int FROM passages p WHERE NOT EXISTS (SELECT 1 FROM passage_embeddings e JOIN active_encoders a
                 ON a.role = 'passage' AND a.model_id = e.model_id WHERE e.passage_id = p.id)) AS unembedded`,
    );
    const fmt = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const at = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(1) : '-');
      return `${String(s.length).padStart(7)} ops  ${(s.length / seconds).toFixed(1).padStart(7)}/s  p50 ${at(0.5).padStart(7)} ms  p99 ${at(0.99).padStart(8)} ms`;
    };
    console.log(`\nsoak — ${CLIENTS} clients × ${MINUTES} min (${seconds.toFixed(0)} s) against ${url}`);
    for (const k of Object.keys(latencies) as Kind[]) console.log(`  ${k.padEnd(9)} ${fmt(latencies[k])}`);
    console.log(
      `  errors: ${Object.keys(errors).length ? JSON.stringify(errors) : 'none'}; retrievals that left out a passage re-written meanwhile (warned, expected): ${raced}`,
    );
    console.log(
      `  documents acknowledged ${acknowledged.size}, stored ${rows.length}; absent ${absent.length}, duplicated ${duplicated}, wrong passage count ${wrongPassages}`,
    );
    console.log(`  pendingWork ${JSON.stringify(pending)}; from the rows: ${direct.unindexed} passages unindexed, ${direct.unembedded} unembedded`);
    const ok =
      absent.length === 0 &&
      duplicated === 0 &&
      wrongPassages === 0 &&
      Object.keys(errors).length === 0 &&
      pending.unindexedPassages + pending.unembeddedPassages + pending.unembeddedDocuments === 0 &&
      direct.unindexed + direct.unembedded === 0;
    console.log(ok ? 'soak: consistent' : 'soak: INCONSISTENT');
    process.exitCode = ok ? 0 : 1;
  } finally {
    await db.close();
    own?.child.kill('SIGTERM');
  }
}

void main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
