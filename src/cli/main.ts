#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config';
import { IngestError } from '../ingest/errors';
import { readInputFiles } from '../ingest/files';
import type { DocumentInput } from '../ingest/types';
import { startServer } from '../server';
import type { Database } from '../store/db';
import { ingestDocuments, summarize, type IngestOutcome } from '../store/ingest';
import { migrate } from '../store/migrate';
import { openDatabase, openMigratedDatabase } from '../store/open';
import { storeStats } from '../store/reads';
import { loadDemoCorpus } from './demo';
import { ProgressBar } from './progress';

const USAGE = `usage: dhr <command> [options]

commands:
  serve [--demo] [--port N]     start the GraphQL server (--demo loads the Factbook corpus into an empty store)
  migrate                       apply pending migrations
  ingest <files|dirs...> [--source S]
                                ingest .json (title tree or array), .jsonl, .md, .txt files
  stats                         count documents, sections, passages and links

environment: DATABASE_URL (PostgreSQL server; unset = embedded PGlite in DATA_DIR, default ./data),
  PORT (4000), HOST (127.0.0.1), MAX_WORDS (100), MAX_DOCUMENT_BYTES, MAX_INGEST_BATCH, MAX_PAGE_SIZE`;

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
    case 'stats': {
      const db = await openMigratedDatabase(config);
      try {
        console.log(JSON.stringify({ database: db.kind, location: db.location, ...(await storeStats(db)) }, null, 2));
      } finally {
        await db.close();
      }
      return 0;
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
  if (values.demo) {
    const loaded = await loadDemoCorpus(db, config.ingest);
    if (loaded > 0) console.error(`demo corpus: loaded ${loaded} Factbook documents`);
  }
  const { url, stop } = await startServer(db, config);
  console.log(`DHR-GraphQL ready at ${url}`);
  const shutdown = async () => {
    await stop();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  return new Promise<number>(() => undefined);
}

async function ingest(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { source: { type: 'string' }, batch: { type: 'string' } },
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
