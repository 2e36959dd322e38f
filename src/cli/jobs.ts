import type { Config } from '../config';
import { DomainError } from '../errors';
import { registerModelFromPath } from '../pipeline/jobs/models';
import { ModelRegistry } from '../pipeline/jobs/registry';
import { ingestJobOptions, jobWorkerSettings, JobWorker } from '../pipeline/jobs/worker';
import type { Database } from '../store/db';
import { modelCounts } from '../store/embeddings';
import { listJobs } from '../store/jobs';
import { listIngestJobs } from '../store/ingest-jobs';
import { openMigratedDatabase } from '../store/open';

/** Opens the store for one command and closes it after. */
async function withDatabase(config: Config, fn: (db: Database) => Promise<number>): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** A job worker on `db` that logs to stderr; `ingest`: it works ingest jobs too (dhr worker). */
export function newWorker(db: Database, models: ModelRegistry, config: Config, trace?: string, ingest = false): JobWorker {
  return new JobWorker(db, models, {
    ...jobWorkerSettings(config),
    trace,
    log: (m) => console.error(m),
    ingest: ingest ? ingestJobOptions(config) : undefined,
  });
}

/** `dhr worker`: works jobs until SIGINT/SIGTERM (or, with --exit-when-idle, until there is nothing to do). */
export function workerCommand(config: Config, options: { concurrency: number; exitWhenIdle?: boolean; trace?: string }): Promise<number> {
  return withDatabase(config, (db) => work(db, config, options));
}

async function work(db: Database, config: Config, values: { concurrency: number; exitWhenIdle?: boolean; trace?: string }): Promise<number> {
  const models = new ModelRegistry(db, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const count = values.concurrency;
  // dhr worker also works ingest jobs (a server started with JOB_WORKERS=0 leaves them here).
  const workers = Array.from({ length: count }, () => newWorker(db, models, config, values.trace, true));
  console.error(`worker: ${count} running`);
  const idle = async () =>
    values.exitWhenIdle === true && (await listJobs(db)).every((j) => FINAL.has(j.status)) && (await listIngestJobs(db)).every((j) => FINAL.has(j.status));
  await Promise.all(workers.map((w) => w.run({ signal: abort.signal, until: idle })));
  await models.close();
  return 0;
}

/**
 * `dhr models register PATH`: any model folder this process can read (the API's
 * registerEmbeddingModel takes only folders inside the server's MODELS_DIR, so this stays on the
 * store); prints the models after, as `dhr models list` does. The other models and jobs commands
 * are operations and printers (cli/operations.ts).
 */
export function registerModelCommand(config: Config, path: string): Promise<number> {
  return withDatabase(config, async (db) => {
    try {
      const row = await registerModelFromPath(db, path, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
      console.error(`registered ${row.name} (${row.dimension}-d); next: dhr reembed --model ${row.name}`);
    } catch (error) {
      // Refusals (a folder that does not load, a name taken, …) are answers, not crashes.
      if (!(error instanceof DomainError)) throw error;
      console.error(`models register: ${error.message}`);
      return 1;
    }
    console.log(JSON.stringify(await modelCounts(db), null, 2));
    return 0;
  });
}
