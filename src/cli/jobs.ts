import type { Config } from '../config';
import { DomainError } from '../errors';
import { registerModelFromPath } from '../pipeline/jobs/models';
import { ModelRegistry } from '../pipeline/jobs/registry';
import { ingestJobOptions, jobWorkerSettings, JobWorker } from '../pipeline/jobs/worker';
import type { Database } from '../store/db';
import { modelCounts } from '../store/embeddings';
import { createJob, getJob, JOB_SCOPES, listJobs, openJobForModel, type JobRow } from '../store/jobs';
import { listIngestJobs } from '../store/ingest-jobs';
import { openMigratedDatabase } from '../store/open';
import { followJob, jobOutcome } from './job-progress';

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

function newWorker(db: Database, models: ModelRegistry, config: Config, trace?: string, ingest = false): JobWorker {
  return new JobWorker(db, models, {
    ...jobWorkerSettings(config),
    trace,
    log: (m) => console.error(m),
    ingest: ingest ? ingestJobOptions(config) : undefined,
  });
}

/**
 * `dhr reembed --model M`: queues a job (or attaches to the model's open one, or to --job N),
 * works on it in this process unless --no-work, and shows its progress until it ends.
 */
export interface ReembedOptions {
  model?: string;
  scope: string;
  documents?: number[];
  job?: number;
  work: boolean;
  trace?: string;
}

export function reembedCommand(config: Config, options: ReembedOptions): Promise<number> {
  return withDatabase(config, (db) => reembed(db, config, options));
}

async function reembed(db: Database, config: Config, values: ReembedOptions): Promise<number> {
  let job: JobRow | undefined;
  if (values.job) {
    job = await getJob(db, values.job);
    if (!job) throw new Error(`no job with id ${values.job}`);
    console.error(`attaching to job ${job.id} (${job.model}, ${job.status})`);
  } else {
    if (!values.model) throw new Error('reembed: give --model NAME (or --job ID to attach)');
    const scope = JOB_SCOPES.find((s) => s === values.scope.toUpperCase());
    if (!scope) throw new Error(`--scope must be one of ${JOB_SCOPES.join(', ')}, got "${values.scope}"`);
    job = await openJobForModel(db, values.model);
    if (job) {
      console.error(`attaching to job ${job.id} (${job.status}) of model ${job.model}`);
    } else {
      job = await createJob(db, { model: values.model, scope, documentIds: values.documents, batchSize: config.jobBatchSize });
      console.error(`job ${job.id}: ${job.documentsTotal} documents and ${job.passagesTotal} passages for ${job.model}`);
    }
  }
  const id = job.id;
  const abort = new AbortController();
  let models: ModelRegistry | undefined;
  let working: Promise<void> | undefined;
  if (values.work) {
    models = new ModelRegistry(db, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
    working = newWorker(db, models, config, values.trace).run({ signal: abort.signal });
  }
  try {
    job = await followJob(async () => (await getJob(db, id))!, 250);
  } finally {
    abort.abort();
    // The step in flight ends before the models and the store close under it (run never rejects).
    await working;
    await models?.close();
  }
  return jobOutcome(job);
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
