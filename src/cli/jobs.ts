import { parseArgs } from 'node:util';
import type { Config } from '../config';
import { ENCODER_ROLES, type EncoderRole } from '../encoders/types';
import { registerModelFromPath } from '../pipeline/jobs/models';
import { ModelRegistry } from '../pipeline/jobs/registry';
import { JobWorker } from '../pipeline/jobs/worker';
import { activateModel, dropModel } from '../store/active';
import type { Database } from '../store/db';
import { modelCounts } from '../store/embeddings';
import { cancelJob, createJob, getJob, JOB_SCOPES, listJobs, openJobForModel, type JobRow, type JobScope } from '../store/jobs';
import { ProgressBar } from './progress';

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

function newWorker(db: Database, models: ModelRegistry, config: Config, trace?: string): JobWorker {
  return new JobWorker(db, models, { batchSize: config.jobBatchSize, pollMs: config.jobPollMs, trace, log: (m) => console.error(m) });
}

/**
 * `dhr reembed --model M`: queues a job (or attaches to the model's open one, or to --job N),
 * works on it in this process unless --no-work, and shows its progress until it ends.
 */
export async function reembedCommand(db: Database, config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      model: { type: 'string' },
      scope: { type: 'string', default: 'ALL' },
      documents: { type: 'string' },
      job: { type: 'string' },
      'no-work': { type: 'boolean' },
      trace: { type: 'string' },
    },
  });
  let job: JobRow | undefined;
  if (values.job) {
    job = await getJob(db, Number(values.job));
    if (!job) throw new Error(`no job with id ${values.job}`);
    console.error(`attaching to job ${job.id} (${job.model}, ${job.status})`);
  } else {
    if (!values.model) throw new Error('reembed: give --model NAME (or --job ID to attach)');
    const scope = values.scope!.toUpperCase() as JobScope;
    if (!JOB_SCOPES.includes(scope)) throw new Error(`--scope must be one of ${JOB_SCOPES.join(', ')}, got "${values.scope}"`);
    job = await openJobForModel(db, values.model);
    if (job) {
      console.error(`attaching to job ${job.id} (${job.status}) of model ${job.model}`);
    } else {
      const documentIds = values.documents?.split(',').map(Number);
      job = await createJob(db, { model: values.model, scope, documentIds, batchSize: config.jobBatchSize });
      console.error(`job ${job.id}: ${job.documentsTotal} documents and ${job.passagesTotal} passages for ${job.model}`);
    }
  }
  const id = job.id;
  const abort = new AbortController();
  let models: ModelRegistry | undefined;
  if (!values['no-work']) {
    models = new ModelRegistry(db, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
    void newWorker(db, models, config, values.trace).run({ signal: abort.signal });
  }
  try {
    job = await follow(db, id);
  } finally {
    abort.abort();
    await models?.close();
  }
  console.log(`job ${job.id} ${job.status}: ${job.documentsDone} documents, ${job.passagesDone} passages${job.error ? `; ${job.error}` : ''}`);
  return job.status === 'succeeded' ? 0 : 1;
}

/** Polls the job and draws one bar per level until it ends. */
async function follow(db: Database, id: number): Promise<JobRow> {
  const bars = { documents: new ProgressBar(0, 'documents'), passages: new ProgressBar(0, 'passages') };
  let started = false;
  for (;;) {
    const job = (await getJob(db, id))!;
    const level = job.documentsDone < job.documentsTotal || job.passagesDone === 0 ? 'documents' : 'passages';
    if (level === 'passages' && !started) {
      bars.documents.update(job.documentsDone, '', job.documentsTotal);
      bars.documents.finish();
      started = true;
    }
    const done = level === 'documents' ? job.documentsDone : job.passagesDone;
    const total = level === 'documents' ? job.documentsTotal : job.passagesTotal;
    bars[level].update(done, job.status, total);
    if (FINAL.has(job.status)) {
      bars[level].finish();
      return job;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `dhr worker`: works jobs until SIGINT/SIGTERM (or, with --exit-when-idle, until there is nothing to do). */
export async function workerCommand(db: Database, config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { concurrency: { type: 'string', default: '1' }, 'exit-when-idle': { type: 'boolean' }, trace: { type: 'string' } } });
  const models = new ModelRegistry(db, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  const count = Number(values.concurrency);
  const workers = Array.from({ length: count }, () => newWorker(db, models, config, values.trace));
  console.error(`worker: ${count} running`);
  const idle = async () => Boolean(values['exit-when-idle']) && (await listJobs(db)).every((j) => FINAL.has(j.status));
  await Promise.all(workers.map((w) => w.run({ signal: abort.signal, until: idle })));
  await models.close();
  return 0;
}

/** `dhr models [list | register PATH | activate NAME [--roles r,r] | drop NAME]`. */
export async function modelsCommand(db: Database, config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { roles: { type: 'string' } } });
  const [action = 'list', target] = positionals;
  if (action !== 'list' && !target) throw new Error(`models ${action}: give a ${action === 'register' ? 'folder' : 'model name'}`);
  switch (action) {
    case 'list':
      break;
    case 'register': {
      const row = await registerModelFromPath(db, target, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
      console.error(`registered ${row.name} (${row.dimension}-d); next: dhr reembed --model ${row.name}`);
      break;
    }
    case 'activate': {
      const roles = values.roles ? (values.roles.split(',') as EncoderRole[]) : ENCODER_ROLES;
      const unknown = roles.filter((r) => !ENCODER_ROLES.includes(r));
      if (unknown.length) throw new Error(`unknown roles ${unknown.join(', ')}; roles are ${ENCODER_ROLES.join(', ')}`);
      await activateModel(db, target, roles);
      console.error(`${target} now serves ${roles.join(', ')}`);
      break;
    }
    case 'drop':
      await dropModel(db, target);
      console.error(`dropped ${target}`);
      break;
    default:
      throw new Error(`models: unknown action "${action}" (list, register, activate, drop)`);
  }
  console.log(JSON.stringify(await modelCounts(db), null, 2));
  return 0;
}

/** `dhr jobs [--status S]` and `dhr jobs cancel ID`. */
export async function jobsCommand(db: Database, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { status: { type: 'string' } } });
  if (positionals[0] === 'cancel') {
    const job = await cancelJob(db, Number(positionals[1]));
    console.log(`job ${job.id} ${job.status}`);
    return 0;
  }
  console.log(JSON.stringify(await listJobs(db, values.status as JobRow['status'] | undefined), null, 2));
  return 0;
}
