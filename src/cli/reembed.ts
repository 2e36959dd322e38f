import type { Config } from '../config';
import type { ModelRegistry } from '../pipeline/jobs/registry';
import { followJob, jobOutcome } from './job-progress';
import { type ServerOptions, type Transport, withTransport } from './transport';

export interface ReembedOptions extends ServerOptions {
  model?: string;
  scope: string;
  documents?: number[];
  job?: number;
  /** Work the job in this process too (in-process only; a server's workers work it). */
  work: boolean;
  trace?: string;
}

interface SentEmbeddingJob {
  id: string;
  model: string;
  status: string;
  documents: { done: number; total: number };
  passages: { done: number; total: number };
  error: string | null;
}

const JOB_FIELDS = 'id model status documents { done total } passages { done total } error';
const OPEN = new Set(['QUEUED', 'RUNNING']);
/** How often the job's progress is read: the store is beside this process, a server across the network. */
const POLL_MS = { store: 250, server: 500 };

/** The job as cli/job-progress.ts draws it (the store's lower-case status). */
const followed = (j: SentEmbeddingJob) => ({
  id: Number(j.id),
  model: j.model,
  status: j.status.toLowerCase(),
  documentsDone: j.documents.done,
  documentsTotal: j.documents.total,
  passagesDone: j.passages.done,
  passagesTotal: j.passages.total,
  error: j.error,
});

/**
 * `dhr reembed`: the job is found (--job), attached to (the model's open one) or queued (the
 * reembed mutation), then followed with the job query until it ends — the same operations
 * in-process or with --url. In-process this process also works the job (unless --no-work); a
 * server's workers (JOB_WORKERS, or a `dhr worker` on its store) work it otherwise. Refusals are
 * the message alone, either way.
 */
export function reembedCommand(config: Config, options: ReembedOptions): Promise<number> {
  return withTransport(
    config,
    options,
    'reembed',
    async (t) => {
      if (t.url && options.trace !== undefined) {
        console.error("reembed: --trace records the batches this process encodes; with --url the server's workers encode them");
        return 1;
      }
      const job = await findOrQueue(t, options);
      const read = async () => {
        const now = await readJob(t, job.id);
        if (!now) throw new Error(`${t.url ? `the server at ${t.url} has` : 'the store has'} no job ${job.id} any more`);
        return followed(now);
      };
      const everyMs = t.store ? POLL_MS.store : POLL_MS.server;
      if (!t.store || !options.work) return jobOutcome(await followJob(read, everyMs));
      return jobOutcome(await working(config, t.store, options.trace, () => followJob(read, everyMs)));
    },
    { answer: false },
  );
}

const readJob = async (t: Transport, id: string) =>
  (await t.request<{ job: SentEmbeddingJob | null }>(`query($id: ID!) { job(id: $id) { ${JOB_FIELDS} } }`, { id })).job;

async function findOrQueue(t: Transport, options: ReembedOptions): Promise<SentEmbeddingJob> {
  if (options.job) {
    const job = await readJob(t, String(options.job));
    if (!job) throw new Error(`no job with id ${options.job}`);
    console.error(`attaching to job ${job.id} (${job.model}, ${job.status.toLowerCase()})`);
    return job;
  }
  if (!options.model) throw new Error('reembed: give --model NAME (or --job ID to attach)');
  const { jobs } = await t.request<{ jobs: SentEmbeddingJob[] }>(`{ jobs { ${JOB_FIELDS} } }`);
  const open = jobs.find((j) => j.model === options.model && OPEN.has(j.status));
  if (open) {
    console.error(`attaching to job ${open.id} (${open.status.toLowerCase()}) of model ${open.model}`);
    return open;
  }
  const { reembed: job } = await t.request<{ reembed: SentEmbeddingJob }>(
    `mutation($model: String!, $scope: ReembedScope!, $ids: [ID!]) { reembed(model: $model, scope: $scope, documentIds: $ids) { ${JOB_FIELDS} } }`,
    { model: options.model, scope: options.scope.toUpperCase(), ids: options.documents?.map(String) ?? null },
  );
  console.error(`job ${job.id}: ${job.documents.total} documents and ${job.passages.total} passages for ${job.model}`);
  return job;
}

/** Runs a job worker on the opened store while `follow` runs; the step in flight ends before the models and the store close under it. */
async function working<T>(config: Config, db: NonNullable<Transport['store']>, trace: string | undefined, follow: () => Promise<T>): Promise<T> {
  // Loaded here: with --url this command is a GraphQL client and loads no encoder.
  const { ModelRegistry: Registry } = require('../pipeline/jobs/registry') as typeof import('../pipeline/jobs/registry');
  const { newWorker } = require('./jobs') as typeof import('./jobs');
  const models: ModelRegistry = new Registry(db, { cacheDir: config.modelCacheDir, threads: config.encoderThreads });
  const abort = new AbortController();
  const run = newWorker(db, models, config, trace).run({ signal: abort.signal });
  try {
    return await follow();
  } finally {
    abort.abort();
    await run;
    await models.close();
  }
}
