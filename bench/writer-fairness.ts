/**
 * npm run bench:writer-fairness — a small ingest beside readers: does the writer get its share?
 *
 * A real `dhr serve` (its own process, the default encoder use-lite, PostgreSQL: DATABASE_URL's
 * server, a fresh database BENCH_DATABASE = dhr_bench_writer) over BENCH_DOCUMENTS (300) synthetic
 * documents (api-corpus.ts) ingested through its API. Then three phases of BENCH_SECONDS (15) each:
 *   readers alone: BENCH_READERS (8) clients loop retrieve(k1: 10, k2: 5) in the default mode, each
 *     question new (so every one is encoded: the question-vector cache never answers);
 *   writer alone: one client loops ingestDocuments of 5 new documents (synchronous, embedded);
 *   both at once.
 * Printed: the writer's ingest time p50 / max and the readers' p50 / p99, alone and together, and
 * the ratios (goals: the writer within 3× of alone, the readers' p99 within 2× of alone). Ratios
 * are of one run's phases, so a machine shared with other work moves both sides alike.
 * BENCH_ROOT: the tree whose `dhr serve` runs (an export of an older commit, to compare).
 */
import 'reflect-metadata';
import { availableParallelism, loadavg } from 'node:os';
import { createApiKey } from '../src/store/keys';
import { migrate } from '../src/store/migrate';
import { PostgresDatabase } from '../src/store/postgres';
import { prng } from '../test/helpers/prng';
import { inheritedEnv, startServe } from '../test/helpers/serve';
import { apiCorpus, TEXT_WORDS } from './api-corpus';
import { databaseUrl, openBenchDatabase } from './database';

const baseUrl = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const DOCS = Number(process.env.BENCH_DOCUMENTS ?? 300);
const READERS = Number(process.env.BENCH_READERS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const NAME = process.env.BENCH_DATABASE ?? 'dhr_bench_writer';
const WRITE_DOCUMENTS = 5;
/** The tree whose `dhr serve` runs (default: this one; another checkout or export to compare with). */
const ROOT = process.env.BENCH_ROOT;
/** The readers' mode: left out, the default (which encodes each question); LEXICAL encodes nothing. */
const MODE = process.env.BENCH_READER_MODE;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
  failed: Record<string, number>;
}

function summary(values: number[], failed: Record<string, number>): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN, count: sorted.length, failed };
}

async function main(): Promise<void> {
  console.log(
    `load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${availableParallelism()} cores`,
  );
  await (await openBenchDatabase(baseUrl, NAME, true)).close();
  const dbUrl = databaseUrl(baseUrl, NAME);
  const db = new PostgresDatabase({ url: dbUrl, maxConnections: 1 });
  await migrate(db);
  const { key } = await createApiKey(db, { role: 'admin', name: 'bench' });
  await db.close();
  const serve = await startServe({ ...inheritedEnv(), DATABASE_URL: dbUrl, RATE_LIMIT_QUERIES: '0', RATE_LIMIT_MUTATIONS: '0', LOG_LEVEL: 'error' }, 110_000, {
    root: ROOT,
  });
  const post = async (query: string, variables: Record<string, unknown>, admin = false) => {
    const response = await fetch(serve.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(admin ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
    return { status: response.status, data: body.data, code: body.errors?.[0]?.extensions?.code ?? (response.ok ? undefined : `HTTP ${response.status}`) };
  };
  try {
    const INGEST = 'mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created updated failed } }';
    const corpus = apiCorpus(DOCS, 7);
    const loading = process.hrtime.bigint();
    for (let i = 0; i < corpus.length; i += 50) {
      const r = await post(INGEST, { docs: corpus.slice(i, i + 50) }, true);
      if (r.code) throw new Error(`loading the corpus: ${r.code}`);
    }
    console.log(`corpus: ${DOCS} documents of 6 passages, ingested and embedded through the API in ${(ms(loading) / 1000).toFixed(1)} s`);

    const rand = prng(11);
    const word = () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)];
    const RETRIEVE = `query($q: String!) { retrieve(question: $q, k1: 10, k2: 5${MODE ? `, mode: ${MODE}` : ''}) { passages { rank passage { id } } } }`;
    let written = 0;
    const writerDocs = () => apiCorpus(WRITE_DOCUMENTS, 1000 + written).map((d, i) => ({ ...d, key: `writer/${written}/${i}` }));

    const phase = async (readers: number, writer: boolean) => {
      const end = Date.now() + SECONDS * 1000;
      const reads: number[] = [];
      const writes: number[] = [];
      const readFailed: Record<string, number> = {};
      const writeFailed: Record<string, number> = {};
      const count = (into: Record<string, number>, code: string) => (into[code] = (into[code] ?? 0) + 1);
      const readerLoops = Array.from({ length: readers }, async () => {
        while (Date.now() < end) {
          const t = process.hrtime.bigint();
          const r = await post(RETRIEVE, { q: `${word()} ${word()} ${word()} item${Math.floor(rand() * DOCS)}` });
          reads.push(ms(t));
          if (r.code) count(readFailed, r.code);
        }
      });
      // The writer's last ingest may end after the phase: it is waited for and counted.
      const writerLoop = writer
        ? (async () => {
            while (Date.now() < end) {
              const docs = writerDocs();
              written++;
              const t = process.hrtime.bigint();
              const r = await post(INGEST, { docs }, true);
              writes.push(ms(t));
              if (r.code) count(writeFailed, r.code);
              else if (r.data.ingestDocuments.created !== WRITE_DOCUMENTS) count(writeFailed, 'not created');
            }
          })()
        : Promise.resolve();
      await Promise.all([...readerLoops, writerLoop]);
      return { reads: summary(reads, readFailed), writes: summary(writes, writeFailed) };
    };

    await phase(READERS, true); // warm-up: both paths, the encoder thread started
    const readersAlone = (await phase(READERS, false)).reads;
    const writerAlone = (await phase(0, true)).writes;
    const both = await phase(READERS, true);

    const f = (n: number) => n.toFixed(0);
    const failures = (l: Latencies) => (Object.keys(l.failed).length ? ` (failed: ${JSON.stringify(l.failed)})` : '');
    console.log(
      `\nreaders: ${READERS} clients, retrieve(k1: 10, k2: 5), ${MODE ?? 'default mode'}, new questions; writer: ingestDocuments of ${WRITE_DOCUMENTS} new documents; ${SECONDS} s a phase\n`,
    );
    console.log('| | writer: ingests, p50 / max ms | readers: answers, p50 / p99 ms |');
    console.log('|---|---|---|');
    console.log(
      `| alone | ${writerAlone.count}, ${f(writerAlone.p50)} / ${f(writerAlone.max)}${failures(writerAlone)} | ${readersAlone.count}, ${f(readersAlone.p50)} / ${f(readersAlone.p99)}${failures(readersAlone)} |`,
    );
    console.log(
      `| together | ${both.writes.count}, ${f(both.writes.p50)} / ${f(both.writes.max)}${failures(both.writes)} | ${both.reads.count}, ${f(both.reads.p50)} / ${f(both.reads.p99)}${failures(both.reads)} |`,
    );
    console.log(
      `| ratio | p50 **${(both.writes.p50 / writerAlone.p50).toFixed(2)}×** (goal ≤ 3×), max ${(both.writes.max / writerAlone.max).toFixed(2)}× | p50 ${(both.reads.p50 / readersAlone.p50).toFixed(2)}×, p99 **${(both.reads.p99 / readersAlone.p99).toFixed(2)}×** (goal ≤ 2×) |`,
    );
    console.log(
      `\nload average at end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
