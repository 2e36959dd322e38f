/**
 * The admin commands that are one GraphQL operation and a printer (cli/operations.ts): with --url
 * they print what they print on the local store. Real processes: the CLI on a store of its own,
 * and the CLI against a real server over HTTP on the suite's database (PGlite or PostgreSQL),
 * both stores fresh and sent the same commands; on PostgreSQL the local CLI also opens the
 * server's own database, so the two forms are compared on one store.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { identityMap } from '../src/adapters/linear';
import { loadConfig } from '../src/config';
import { registerModelFromPath } from '../src/pipeline/jobs/models';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { listAdapters, registerAdapter } from '../src/store/adapters';
import type { Database } from '../src/store/db';
import { modelByName } from '../src/store/embeddings';
import { ingestJobListing, listIngestJobs } from '../src/store/ingest-jobs';
import { cancelJob, createJob, listJobs } from '../src/store/jobs';
import { openMigratedDatabase } from '../src/store/open';
import { settingsHistory } from '../src/store/retrieval-settings';
import { dhr, useCliStore } from './helpers/cli';
import { useTestServer } from './helpers/server';
import { writeTinyModel } from './helpers/tiny-model';

type Run = Awaited<ReturnType<typeof dhr>>;

describe('dhr models | settings | adapters | jobs with --url print what they print locally', () => {
  // No workers: the jobs made here stay queued until cancelled.
  const server = useTestServer({ JOB_WORKERS: '0' });
  const local = useCliStore('dhr-cli-remote-admin-');
  const remote = (args: string[]) => dhr([...args, '--url', server.url], { DHR_API_KEY: server.adminKey });
  /** The same command on the local store and through the server. */
  const both = async (args: string[]): Promise<[Run, Run]> => [await dhr(args, local.env), await remote(args)];
  /** A server's refusal is the local one with the error code after it. */
  const refusedAlike = ([here, there]: [Run, Run], code: string) => {
    expect(here.code).toBe(1);
    expect(there.code).toBe(1);
    expect(there.stderr).toBe(here.stderr.replace(/\n$/, ` (${code})\n`));
  };

  it('models register-external | activate | drop', async () => {
    for (const args of [
      ['models', 'register-external', 'ext', '--dimension', '4'],
      ['models', 'activate', 'ext', '--roles', 'document,passage'],
      ['models', 'register-external', 'ext2', '--dimension', '3'],
      ['models', 'drop', 'ext2'],
    ]) {
      const [here, there] = await both(args);
      expect(there).toEqual(here);
      expect(here.code).toBe(0);
    }
    const [models, sentModels] = await both(['models', 'list']);
    expect(sentModels).toEqual(models);
    expect(JSON.parse(models.stdout)).toEqual([expect.objectContaining({ name: 'ext', roles: ['document', 'passage'] })]);
    refusedAlike(await both(['models', 'drop', 'ext2']), 'NOT_FOUND');
    refusedAlike(await both(['models', 'drop', 'ext']), 'MODEL_ACTIVE');
    refusedAlike(await both(['models', 'activate', 'nope']), 'NOT_FOUND');
    refusedAlike(await both(['models', 'register-external', 'ext', '--dimension', '1.5']), 'BAD_USER_INPUT');
    // Checked before anything is sent or opened: the same words either way.
    const [here, there] = await both(['models', 'activate', 'ext', '--roles', 'document,bogus']);
    expect(there).toEqual(here);
    expect(here.stderr).toMatch(/^unknown roles bogus/);
  });

  it('settings set | rollback', async () => {
    /** What differs between two stores sent the same commands: when, and who (cli, or the key's name). */
    const same = ([here, there]: [Run, Run]) => {
      expect(here.code).toBe(0);
      expect(there.code).toBe(0);
      const parsed = JSON.parse(here.stdout);
      expect(JSON.parse(there.stdout)).toEqual({ ...parsed, createdAt: expect.any(String), setBy: 'test admin' });
      expect(parsed.setBy).toBe('cli');
      return parsed;
    };
    const set = same(await both(['settings', 'set', '--mode', 'HYBRID_HIERARCHICAL', 'lambda=0.25', 'documentPassages=top3', '--note', 'n']));
    expect(set).toMatchObject({ version: 1, modes: { HYBRID_HIERARCHICAL: { lambda: '0.25 (corpus)' } } });
    refusedAlike(await both(['settings', 'set', '--mode', 'HYBRID', 'lambda=11']), 'BAD_USER_INPUT');
    refusedAlike(await both(['settings', 'set', '--mode', 'HYBRID', 'lambda']), 'BAD_USER_INPUT');
    same(await both(['settings', 'set', '--mode', 'HYBRID_HIERARCHICAL', '--unset', 'lambda']));
    expect(same(await both(['settings', 'rollback']))).toMatchObject({ version: 3, previous: null });
    refusedAlike(await both(['settings', 'rollback']), 'CONFLICT');
    expect(same(await both(['settings', 'show']))).toMatchObject({ version: 3 });

    // history: each version as it was set, newest first; through the server, what its store holds, byte for byte.
    for (const limit of [undefined, 2]) {
      const args = ['settings', 'history', ...(limit ? ['--limit', String(limit)] : [])];
      const [here, there] = await both(args);
      expect(here.code).toBe(0);
      expect(there).toEqual({ code: 0, stdout: `${JSON.stringify(await settingsHistory(server.db, limit), null, 2)}\n`, stderr: '' });
      const versions = JSON.parse(here.stdout) as { setBy: string }[];
      expect(versions.map((v) => v.setBy)).toEqual(Array(limit ?? 3).fill('cli'));
      expect(JSON.parse(there.stdout)).toEqual(versions.map((v) => ({ ...v, createdAt: expect.any(String), setBy: 'test admin' })));
    }
    expect(JSON.parse((await dhr(['settings', 'history'], local.env)).stdout)).toMatchObject([
      { version: 3, previous: null, settings: {} },
      { version: 2, previous: 1, note: null, settings: { HYBRID_HIERARCHICAL: { documentPassages: 'top3' } } },
      { version: 1, previous: null, note: 'n', evidence: null, settings: { HYBRID_HIERARCHICAL: { lambda: 0.25, documentPassages: 'top3' } } },
    ]);
    const tooMany = await server.post('{ retrievalSettingsHistory(first: 1001) { version } }');
    expect(tooMany.body.errors[0]).toMatchObject({ message: 'first must be an integer from 0 to 1000, got 1001', extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('adapters list | activate | drop', async () => {
    /** The local store, opened by the test between commands (no CLI process holds it then). */
    const onLocal = async <T>(fn: (db: Database) => Promise<T>): Promise<T> => {
      const db = await openMigratedDatabase(loadConfig(local.env));
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    };
    for (const args of [
      ['models', 'register-external', 'ada', '--dimension', '3'],
      ['models', 'activate', 'ada'],
    ]) {
      const [here, there] = await both(args);
      expect(there).toEqual(here);
    }
    // The same adapters on both stores, over the same models (same ids: both stores had the same commands).
    const register = async (db: Database) => {
      const ada = (await modelByName(db, 'ada'))!;
      const training = {
        pairs: 12,
        kinds: ['link'],
        levels: {
          passage: {
            pairs: { train: 10, heldOut: 2 },
            skipped: 0,
            baseline: { loss: 1.5, accuracy: 0.5 },
            bestEpoch: 1,
            curve: [{ epoch: 1, trainLoss: 1.25, heldOut: { loss: 1.1, accuracy: 0.75 } }],
            seconds: 0.3,
          },
        },
      };
      await registerAdapter(db, { name: 'a1', dimension: 3, maps: { passage: identityMap(3) }, models: { passage: { question: ada, target: ada } }, training });
      await registerAdapter(db, {
        name: 'a2',
        dimension: 3,
        maps: { document: identityMap(3) },
        models: { document: { question: ada, target: ada } },
        training: {},
      });
    };
    await register(server.db);
    await onLocal(register);
    // What the local listing prints for the server's store: the stored record's fields in this order, no weights.
    const listed = async () =>
      `${JSON.stringify(
        (await listAdapters(server.db)).map((a) => ({
          name: a.name,
          active: a.active,
          dimension: a.dimension,
          levels: a.levels,
          models: a.models,
          createdAt: a.createdAt,
          training: a.training,
        })),
        null,
        2,
      )}\n`;
    for (const [args, said] of [
      [['adapters'], ''],
      [['adapters', 'activate', 'a1'], 'adapter a1 is active\n'],
      [['adapters', 'list'], ''],
      [['adapters', 'drop', 'a2'], 'adapter a2 dropped\n'],
      [['adapters', 'activate', 'none'], 'no adapter is active\n'],
    ] as const) {
      const [here, there] = await both([...args]);
      expect(here).toMatchObject({ code: 0, stderr: said });
      expect(there).toEqual({ code: 0, stdout: await listed(), stderr: said });
      const adapters = JSON.parse(here.stdout) as { createdAt: string }[];
      expect(JSON.parse(there.stdout)).toEqual(adapters.map((a) => ({ ...a, createdAt: expect.any(String) })));
    }
    expect(JSON.parse((await dhr(['adapters'], local.env)).stdout)).toEqual([
      expect.objectContaining({
        name: 'a1',
        active: false,
        levels: ['passage'],
        models: { passage: expect.objectContaining({ question: 'ada', target: 'ada' }) },
      }),
    ]);
    refusedAlike(await both(['adapters', 'activate', 'nope']), 'NOT_FOUND');
    refusedAlike(await both(['adapters', 'drop', 'a2']), 'NOT_FOUND');
    await both(['adapters', 'activate', 'a1']);
    refusedAlike(await both(['adapters', 'drop', 'a1']), 'CONFLICT');

    // A row registered by hand, its level's record without a baseline, epochs or held-out pairs: listed as stored, the API's figures 0.
    const bare = async (db: Database) => {
      const ada = (await modelByName(db, 'ada'))!;
      const training = { levels: { passage: { pairs: { train: 4 } } } };
      await registerAdapter(db, { name: 'a3', dimension: 3, maps: { passage: identityMap(3) }, models: { passage: { question: ada, target: ada } }, training });
    };
    await bare(server.db);
    await onLocal(bare);
    const [here, there] = await both(['adapters']);
    expect(here).toMatchObject({ code: 0, stderr: '' });
    expect(there).toEqual({ code: 0, stdout: await listed(), stderr: '' });
    expect(JSON.parse(here.stdout).at(-1)).toMatchObject({ name: 'a3', levels: ['passage'], training: { levels: { passage: { pairs: { train: 4 } } } } });
    const levels = await server.post('{ adapters { name levels { trainPairs heldOutPairs baselineRecallAt1 recallAt1 bestEpoch epochs { epoch } } } }');
    expect(levels.body.data.adapters.at(-1)).toEqual({
      name: 'a3',
      levels: [{ trainPairs: 4, heldOutPairs: 0, baselineRecallAt1: 0, recallAt1: 0, bestEpoch: 0, epochs: [] }],
    });
  });

  it('jobs list [--ingest] and jobs cancel [--ingest]', async () => {
    const model = await registerModelFromPath(server.db, await writeTinyModel(local.work, 'tiny-remote'));
    const job = await createJob(server.db, { model: model.name, scope: 'ALL', batchSize: 16 });
    const started = await server.post('mutation { startIngest(documents: [{ title: "Tides", text: "The moon pulls the oceans." }]) { id } }');
    const ingestJob = started.body.data.startIngest.id;
    // What the local listing prints for the server's store (cli/operations.ts prints the same fields in the same order).
    const listed = async () => JSON.stringify(await listJobs(server.db), null, 2);
    const listedIngest = async () => JSON.stringify((await listIngestJobs(server.db)).map(ingestJobListing), null, 2);

    const jobs = await remote(['jobs', 'list']);
    expect(jobs.stdout).toBe(`${await listed()}\n`);
    expect(JSON.parse(jobs.stdout)).toEqual([expect.objectContaining({ id: job.id, modelId: model.id, model: 'tiny-remote', status: 'queued' })]);
    expect((await remote(['jobs', 'list', '--ingest'])).stdout).toBe(`${await listedIngest()}\n`);

    expect(await remote(['jobs', 'cancel', String(job.id)])).toMatchObject({ code: 0, stdout: `job ${job.id} cancelled\n` });
    expect(await remote(['jobs', 'cancel', '--ingest', ingestJob])).toMatchObject({ code: 0, stdout: `ingest job ${ingestJob} cancelled\n` });
    expect((await remote(['jobs', '--status', 'cancelled'])).stdout).toBe(`${await listed()}\n`);
    expect((await remote(['jobs', 'list', '--ingest', '--status', 'cancelled'])).stdout).toBe(`${await listedIngest()}\n`);

    // A refusal is its message alone, as this command has always said it locally.
    const [here, there] = await both(['jobs', 'cancel', '99']);
    expect(there).toEqual(here);
    expect(here).toMatchObject({ code: 1, stderr: 'no job with id 99\n' });
    expect((await remote(['jobs', 'cancel', String(job.id)])).stderr).toBe(
      `job ${job.id} has already cancelled; only queued or running jobs can be cancelled\n`,
    );

    // On PostgreSQL the local CLI opens the server's database: the two forms on one store.
    if (server.dbUrl) {
      const env = { DATABASE_URL: server.dbUrl };
      for (const args of [['jobs', 'list'], ['jobs', 'list', '--ingest'], ['models', 'list'], ['settings', 'show'], ['settings', 'history'], ['adapters']]) {
        const [onStore, sent] = [await dhr(args, env), await remote(args)];
        expect(sent).toEqual(onStore);
      }
    }
  }, 300_000);
});

describe('dhr reembed --url queues the job on the server and follows it to its end', () => {
  // The command only queues and follows: the server's worker writes the ingest jobs, and a worker
  // on its store (as `dhr worker` would be; the test server has no encoders) the re-embedding ones.
  const server = useTestServer({ JOB_WORKERS: '1' });
  const local = useCliStore('dhr-cli-remote-reembed-');
  const remote = (args: string[]) => dhr([...args, '--url', server.url], { DHR_API_KEY: server.adminKey });
  const both = async (args: string[]): Promise<[Run, Run]> => [await dhr(args, local.env), await remote(args)];
  /** stderr without the progress bars (their rates and times differ from run to run). */
  const said = (run: Run) => run.stderr.split('\n').filter((line) => line !== '' && !/^(documents|passages) \[/.test(line));

  it('prints what the local command prints, and the job is the server’s', async () => {
    const models = new ModelRegistry(server.db);
    const abort = new AbortController();
    const working = new JobWorker(server.db, models, { batchSize: 16, pollMs: 50 }).run({ signal: abort.signal });
    try {
      await reembedThroughServer();
    } finally {
      abort.abort();
      await working;
      await models.close();
    }
    // An open job of the model is followed, not queued again (no worker now: it stays queued until cancelled).
    const open = await createJob(server.db, { model: 'tiny', scope: 'STALE', batchSize: 16 });
    const following = remote(['reembed', '--model', 'tiny']);
    let ended = false;
    void following.finally(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 5000));
    // Every open job, each second until the command ends: one it queued (had it not attached) would never end.
    while (!ended) {
      for (const job of await listJobs(server.db)) if (job.status === 'queued' || job.status === 'running') await cancelJob(server.db, job.id);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const followed = await following;
    expect(followed).toMatchObject({ code: 1, stdout: `job ${open.id} cancelled: 0 documents, 0 passages\n` });
    expect(said(followed)).toEqual([`attaching to job ${open.id} (queued) of model tiny`]);
  }, 300_000);

  async function reembedThroughServer() {
    const folder = await writeTinyModel(local.work, 'tiny');
    await writeFile(join(local.work, 'a.md'), '# Tides\n\nThe moon pulls the oceans.\n\n## Spring\n\nSpring tides are high.\n');
    await writeFile(join(local.work, 'b.md'), '# Winds\n\nThe sun heats the air.\n');
    const files = [join(local.work, 'a.md'), join(local.work, 'b.md')];
    expect((await dhr(['models', 'register', folder], local.env)).code).toBe(0);
    expect((await dhr(['ingest', '--no-embed', ...files], local.env)).code).toBe(0);
    await registerModelFromPath(server.db, folder);
    expect((await remote(['ingest', ...files])).code).toBe(0);

    const [here, there] = await both(['reembed', '--model', 'tiny']);
    expect(here).toMatchObject({ code: 0, stdout: 'job 1 succeeded: 2 documents, 3 passages\n' });
    expect(there.stdout).toBe(here.stdout);
    expect(there.code).toBe(0);
    expect(said(there)).toEqual(said(here).filter((line) => line !== 'job 1 succeeded'));
    expect(said(there)).toEqual(['job 1: 2 documents and 3 passages for tiny']);
    expect(there.stderr).toMatch(/passages \[#+\] 3\/3/);
    // The server's store holds the job and its vectors; the local store has only its own.
    expect(await listJobs(server.db)).toEqual([expect.objectContaining({ id: 1, model: 'tiny', status: 'succeeded', documentsDone: 2, passagesDone: 3 })]);
    expect(JSON.parse((await dhr(['jobs'], local.env)).stdout)).toHaveLength(1);

    const [attached, attachedThere] = await both(['reembed', '--job', '1']);
    expect(attachedThere).toMatchObject({ code: 0, stdout: attached.stdout });
    expect(said(attachedThere)).toEqual(said(attached));
    expect(said(attached)).toEqual(['attaching to job 1 (tiny, succeeded)']);

    for (const args of [
      ['reembed', '--job', '99'],
      ['reembed', '--model', 'nope'],
      ['reembed', '--model', 'tiny', '--scope', 'documents'],
      ['reembed', '--model', 'tiny', '--documents', '1'],
    ]) {
      const [refused, refusedThere] = await both(args);
      expect(refused.code).toBe(1);
      expect(refusedThere).toEqual(refused);
    }
    expect(await remote(['reembed', '--model', 'tiny', '--trace', join(local.work, 'trace')])).toMatchObject({
      code: 1,
      stderr: "reembed: --trace records the batches this process encodes; with --url the server's workers encode them\n",
    });
  }
});
