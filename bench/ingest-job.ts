/**
 * npm run bench:ingest-job — what a client waits for when it ingests through a running `dhr serve`
 * (real default model, embedding on ingest): the same Markdown payload (BENCH_DOCUMENTS
 * documents of about BENCH_DOCUMENT_BYTES each; the defaults are the ingest-job bound, 64 documents,
 * 256 KiB) sent once as a synchronous ingestDocuments (the baseline: the answer comes when
 * everything is written and embedded) and once as startIngest (the answer is the job; the job then
 * runs to the end in the server's worker). Prints both answer times, the job's total time and its
 * ratio to the synchronous ingest, in the same run on the same server.
 * Embedded PGlite in a temporary folder, or the server of DATABASE_URL (a database it creates and drops).
 *   BENCH_DOCUMENTS (64)  BENCH_DOCUMENT_BYTES (4000)
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { createApiKey } from '../src/store/keys';
import { openMigratedDatabase } from '../src/store/open';
import { prng } from '../test/helpers/prng';
import { inheritedEnv, startServe } from '../test/helpers/serve';
import { databaseUrl } from './database';

const documents = Number(process.env.BENCH_DOCUMENTS ?? 64);
const documentBytes = Number(process.env.BENCH_DOCUMENT_BYTES ?? 4_000);
const WORDS = ['river', 'capital', 'bridge', 'museum', 'harbour', 'mountain', 'castle', 'railway', 'festival', 'island', 'forest', 'market', 'north', 'trade'];

function payload(prefix: string): { key: string; markdown: string }[] {
  const rand = prng(documents);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  return Array.from({ length: documents }, (_, i) => {
    let markdown = `# ${prefix} page ${i}\n\nAbout the ${pick()} and the ${pick()}.\n`;
    for (let s = 0; markdown.length < documentBytes; s++) {
      markdown += `\n## Part ${s}\n\n${Array.from({ length: 8 }, () => Array.from({ length: 12 }, pick).join(' ') + '.').join(' ')}\n`;
    }
    return { key: `${prefix}/${i}`, markdown };
  });
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'dhr-bench-ingest-job-'));
  const base = process.env.DATABASE_URL;
  const name = 'dhr_bench_ingest_job';
  let env: Record<string, string>;
  if (base) {
    const admin = new Client({ connectionString: base });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    env = { DATABASE_URL: databaseUrl(base, name) };
  } else env = { DATA_DIR: join(work, 'data') };
  const db = await openMigratedDatabase(loadConfig(env));
  const key = (await createApiKey(db, { role: 'admin', name: 'bench' })).key;
  await db.close();
  // No bound for ingestDocuments here, and no request timeout: the baseline is the synchronous
  // answer to the same payload, however long it takes (the default REQUEST_TIMEOUT_MS is 60 s).
  const serve = await startServe({
    ...inheritedEnv(),
    ...env,
    INGEST_JOB_DOCUMENTS: '100000',
    INGEST_JOB_BYTES: String(1 << 30),
    REQUEST_TIMEOUT_MS: '0',
    JOB_POLL_MS: '100',
  });
  const post = async (query: string, variables?: Record<string, unknown>) => {
    const response = await fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
  const seconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e9;
  try {
    const syncDocs = payload('sync');
    const bytes = Buffer.byteLength(JSON.stringify(syncDocs));
    console.log(
      `${base ? 'PostgreSQL' : 'PGlite'}, ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}; ${documents} Markdown documents, ${(bytes / 1024).toFixed(0)} KiB of JSON`,
    );
    let t = process.hrtime.bigint();
    const sync = (await post(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created passages embedded { passages } } }`, { d: syncDocs }))
      .ingestDocuments;
    const syncSeconds = seconds(t);
    const cut = syncSeconds > 60 ? '; over the default REQUEST_TIMEOUT_MS (60 s): a client would have got TIMEOUT' : '';
    console.log(
      `  synchronous ingestDocuments (baseline): answered after ${syncSeconds.toFixed(2)} s  (${sync.created} created, ${sync.passages} passages, ${sync.embedded.passages} embedded${cut})`,
    );

    t = process.hrtime.bigint();
    const job = (await post(`mutation($d: [DocumentInput!]!) { startIngest(documents: $d) { id } }`, { d: payload('job') })).startIngest;
    const answerSeconds = seconds(t);
    let state;
    for (;;) {
      state = (await post(`query($id: ID!) { ingestJob(id: $id) { status created passages { done } } }`, { id: job.id })).ingestJob;
      if (state.status !== 'QUEUED' && state.status !== 'RUNNING') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const jobSeconds = seconds(t);
    const embedded = await post(`{ stats { passages } embeddingModels { passages } }`);
    console.log(`  startIngest: answered after ${(answerSeconds * 1000).toFixed(0)} ms (${(answerSeconds / syncSeconds).toFixed(3)}× the baseline's wait)`);
    console.log(
      `  the job: ${state.status.toLowerCase()} after ${jobSeconds.toFixed(2)} s (${(jobSeconds / syncSeconds).toFixed(2)}× the baseline), ` +
        `${state.created} created, ${state.passages.done} passages; store: ${embedded.stats.passages} passages, ${embedded.embeddingModels[0].passages} embedded`,
    );
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
    if (base) {
      const admin = new Client({ connectionString: base });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
