#!/usr/bin/env node
import 'reflect-metadata';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config';
import { IngestError } from '../ingest/errors';
import { readInputFiles } from '../ingest/files';
import type { DocumentInput } from '../ingest/types';
import { startServer } from '../server';
import type { Database } from '../store/db';
import { ingestDocuments, summarize, type IngestOutcome } from '../pipeline/ingest';
import { migrate } from '../store/migrate';
import { openDatabase, openMigratedDatabase } from '../store/open';
import { storeStats } from '../store/reads';
import { modelCounts } from '../store/embeddings';
import { indexLexical } from '../store/lexical';
import { runEvaluation } from '../eval';
import { packageRoot } from '../paths';
import { loadDemoCorpus } from './demo';
import { describeEmbed, embedWithProgress, loadEmbedding } from './embed';
import { jobsCommand, modelsCommand, reembedCommand, workerCommand } from './jobs';
import { announceKeys, keysCommand, KEYS_USAGE } from './keys';
import { ProgressBar } from './progress';

const USAGE = `usage: dhr <command> [options]

commands:
  serve [--demo] [--port N]     start the GraphQL server (--demo loads the Factbook corpus into an empty store)
  migrate                       apply pending migrations
  ingest <files|dirs...> [--source S] [--no-embed]
                                ingest .json (title tree or array), .jsonl, .md, .txt files, then embed them
  embed                         embed every document and passage that lacks a current embedding
  stats                         count documents, sections, passages, links and embeddings per model
  models [list]                 registered embedding models, their coverage and the roles they serve
  models register <folder|use-lite>   register a model (loaded and probed first)
  models activate <name> [--roles questionDocument,document,questionPassage,passage]
                                switch retrieval to a model (refused until its embeddings are complete)
  models drop <name>            delete a model that serves no role, with its embeddings
  reembed --model M [--scope ALL|STALE|DOCUMENTS] [--documents 1,2] [--job ID] [--no-work]
                                queue a re-embedding job (or attach to the model's open one, or to --job),
                                work on it here and show its progress until it ends
  worker [--concurrency N] [--exit-when-idle]
                                work re-embedding jobs (the server also runs JOB_WORKERS of its own)
  jobs [--status S] | jobs cancel <id>
${KEYS_USAGE}
  eval --dataset pydocs|factbook [--out docs/eval] [--cache .cache/datasets] [--k1-sweep 10,50,100,300]
                                build a data set, load it into a fresh in-memory PGlite (DATABASE_URL is not
                                used), run every retrieval mode, the λ and k1 sweeps, write the report (docs/eval)

environment: DATABASE_URL (PostgreSQL server; unset = embedded PGlite in DATA_DIR, default ./data),
  PORT (4000), HOST (127.0.0.1), MAX_WORDS (100), MAX_DOCUMENT_BYTES, MAX_INGEST_BATCH, MAX_PAGE_SIZE,
  ENCODER (use-lite | custom model folder), ENCODER_QUESTION_DOCUMENT, ENCODER_DOCUMENT, ENCODER_QUESTION_PASSAGE,
  ENCODER_PASSAGE, MODEL_CACHE_DIR (.cache/models), ENCODER_THREADS (0 = all cores), EMBED_BATCH_SIZE (64), EMBED_ON_INGEST (true),
  JOB_WORKERS (1), JOB_BATCH_SIZE (32), JOB_POLL_MS (1000),
  READ_ACCESS (public | key), MAX_QUERY_DEPTH (12), MAX_QUERY_COST (500000), MAX_BODY_BYTES (4194304)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  switch (command) {
    case 'serve':
      return serve(config, rest);
    case 'migrate': {
      const db = await openDatabase(config);
      try {
        const applied = await migrate(db);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'ingest':
      return ingest(config, rest);
    case 'keys':
      return keysCommand(config, rest);
    case 'embed': {
      const db = await openMigratedDatabase(config);
      try {
        const { models, targets } = await loadEmbedding(db, config);
        try {
          console.log(describeEmbed(await embedWithProgress(db, targets, config), targets));
        } finally {
          await models.close();
        }
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'eval':
      return evalCommand(config, rest);
    case 'stats': {
      const db = await openMigratedDatabase(config);
      try {
        const stats = { database: db.kind, location: db.location, ...(await storeStats(db)), models: await modelCounts(db) };
        console.log(JSON.stringify(stats, null, 2));
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'reembed':
    case 'worker':
    case 'models':
    case 'jobs': {
      const db = await openMigratedDatabase(config);
      try {
        if (command === 'reembed') return await reembedCommand(db, config, rest);
        if (command === 'worker') return await workerCommand(db, config, rest);
        if (command === 'models') return await modelsCommand(db, config, rest);
        return await jobsCommand(db, rest);
      } finally {
        await db.close();
      }
    }
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return command === undefined ? 1 : 0;
    default:
      console.error(`unknown command "${command}"\n\n${USAGE}`);
      return 1;
  }
}

async function serve(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { demo: { type: 'boolean' }, port: { type: 'string' } } });
  if (values.port !== undefined) config = loadConfig({ ...process.env, PORT: values.port });
  const db = await openMigratedDatabase(config);
  console.error(`database: ${db.kind} (${db.location})`);
  const { models, targets: embedding } = await loadEmbedding(db, config);
  console.error(`encoders: ${embedding.encoders.distinct().map((e) => `${e.name} (${e.dimension}-d)`).join(', ')}`);
  if (values.demo) {
    const loaded = await loadDemoCorpus(db, config.ingest);
    if (loaded > 0) console.error(`demo corpus: loaded ${loaded} Factbook documents`);
  }
  const lexical = await indexLexical(db);
  if (lexical > 0) console.error(`full-text index: ${lexical} passages`);
  // The server also works re-embedding jobs (JOB_WORKERS).
  const { url, stop } = await startServer(db, config, models);
  console.log(`DHR-GraphQL ready at ${url}`);
  await announceKeys(db, values.demo === true, url);
  // Whatever lacks an embedding (the demo corpus on first start) is embedded while the server answers.
  const background = embedWithProgress(db, embedding, config).then(
    (summary) => {
      if (summary.documents + summary.passages > 0) console.error(describeEmbed(summary, embedding));
    },
    (error: unknown) => console.error(`embedding stopped: ${error instanceof Error ? error.message : error}`),
  );
  const shutdown = async () => {
    await stop();
    await models.close();
    await db.close();
    process.exit(0);
  };
  void background;
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  return new Promise<number>(() => undefined);
}

async function ingest(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { source: { type: 'string' }, 'no-embed': { type: 'boolean' } },
  });
  if (positionals.length === 0) {
    console.error('ingest: give at least one file or directory');
    return 1;
  }
  const db = await openMigratedDatabase(config);
  const outcomes: IngestOutcome[] = [];
  try {
    // Read everything first so the bar knows its total; a batch of inputs is validated and written per document.
    const items: { origin: string; item: DocumentInput | IngestError }[] = [];
    for await (const { origin, input, error } of readInputFiles(positionals, config.ingest)) {
      const item = error ?? (input as DocumentInput);
      if (!(item instanceof IngestError) && values.source && !item.source) item.source = values.source;
      items.push({ origin, item });
    }
    const bar = new ProgressBar(items.length, 'ingest');
    let passages = 0;
    const batchSize = 500;
    for (let start = 0; start < items.length; start += batchSize) {
      const batch = items.slice(start, start + batchSize);
      const summary = await runBatch(db, batch, config, (o) => {
        passages += o.passages;
        bar.tick(`${passages} passages`);
      });
      outcomes.push(...summary.outcomes.map((o) => ({ ...o, index: o.index + start })));
    }
    bar.finish();
    const written = outcomes.filter((o) => o.status === 'created' || o.status === 'updated').map((o) => o.documentId as number);
    await indexLexical(db, written);
    if (config.embedOnIngest && !values['no-embed'] && written.length > 0) {
      const { models, targets } = await loadEmbedding(db, config);
      try {
        console.log(describeEmbed(await embedWithProgress(db, targets, config, written), targets));
      } finally {
        await models.close();
      }
    }
  } finally {
    await db.close();
  }
  const total = summarize(outcomes);
  for (const o of total.outcomes.filter((o) => o.status === 'failed')) console.error(`failed: ${o.message}`);
  console.log(
    `ingested ${outcomes.length} documents: ${total.created} created, ${total.updated} updated, ` +
      `${total.unchanged} unchanged, ${total.failed} failed; ${total.passages} passages written`,
  );
  return total.failed > 0 ? 2 : 0;
}

async function evalCommand(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { dataset: { type: 'string' }, out: { type: 'string' }, cache: { type: 'string' }, 'k1-sweep': { type: 'string' } },
  });
  if (!values.dataset) {
    console.error('eval: give --dataset pydocs or --dataset factbook');
    return 1;
  }
  const root = packageRoot();
  const k1Sweep = (values['k1-sweep'] ?? '10,50,100,300').split(',').map((k) => Number(k.trim()));
  if (k1Sweep.some((k) => !Number.isInteger(k) || k < 1 || k > 1000)) {
    console.error('eval: --k1-sweep takes integers from 1 to 1000, comma-separated');
    return 1;
  }
  const written = await runEvaluation({
    dataset: values.dataset,
    cacheDir: path.resolve(values.cache ?? path.join(root, '.cache', 'datasets')),
    outDir: path.resolve(values.out ?? path.join(root, 'docs', 'eval')),
    k1: 100,
    k2: 100,
    k1Sweep,
    encoders: config.encoders,
    modelCacheDir: config.modelCacheDir,
    encoderThreads: config.encoderThreads,
    ingest: config.ingest,
    embedBatchSize: config.embedBatchSize,
    log: (line) => console.error(line),
  });
  console.log(`wrote ${written.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
  return 0;
}

function runBatch(
  db: Database,
  batch: { origin: string; item: DocumentInput | IngestError }[],
  config: Config,
  onOutcome: (o: IngestOutcome) => void,
) {
  return ingestDocuments(
    db,
    batch.map((b) => b.item),
    { ...config.ingest, onOutcome },
    (i) => batch[i].origin,
  );
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
