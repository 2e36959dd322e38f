import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_INGEST_OPTIONS } from '../../src/ingest/types';
import { ingest } from '../../src/pipeline/ingest';
import { activateStoredModel, registerModelFromPath } from '../../src/pipeline/jobs/models';
import { ModelRegistry } from '../../src/pipeline/jobs/registry';
import { JobWorker } from '../../src/pipeline/jobs/worker';
import { finishPendingStep } from '../../src/pipeline/pending';
import { activeAssignment } from '../../src/store/active';
import { createJob, getJob } from '../../src/store/jobs';
import { createCitusDatabase, type CitusTestDatabase } from '../helpers/citus';
import { writeTinyModel } from '../helpers/tiny-model';

/** A re-embedding job (row-locked batches on reference tables) and a model activation on Citus, with a real tiny model. */
describe('Citus: re-embedding job and model activation', () => {
  let citus: CitusTestDatabase;
  let root: string;
  beforeAll(async () => {
    citus = await createCitusDatabase();
    root = await mkdtemp(join(tmpdir(), 'dhr-citus-jobs-'));
  });
  afterAll(async () => {
    await citus?.drop();
    await rm(root, { recursive: true, force: true });
  });

  it('embeds every document and passage of the store with a new model, then activates it', async () => {
    const db = citus.db;
    const docs = Array.from({ length: 10 }, (_, i) => ({
      key: `doc-${i}`,
      title: `the capital of france ${i}`,
      sections: [
        { title: 'river', text: `berlin is a city ${i}.` },
        { title: 'north', text: 'the largest mountain.' },
      ],
    }));
    await ingest(db, docs, DEFAULT_INGEST_OPTIONS);
    const model = await registerModelFromPath(db, await writeTinyModel(root, 'tiny-c', { seed: 3 }));
    const job = await createJob(db, { model: model.name, scope: 'ALL', batchSize: 4 });
    const registry = new ModelRegistry(db);
    const worker = new JobWorker(db, registry, { batchSize: 4, pollMs: 50 });
    await worker.run({ until: async () => ['succeeded', 'failed', 'cancelled'].includes((await getJob(db, job.id))!.status) });
    const done = (await getJob(db, job.id))!;
    expect(done.error ?? null).toBeNull();
    expect(done.status).toBe('succeeded');
    const [counts] = await db.query<{ d: number; p: number; pe: number }>(
      `SELECT (SELECT count(*)::int FROM document_embeddings WHERE model_id = $1) AS d,
              (SELECT count(*)::int FROM passages) AS p,
              (SELECT count(*)::int FROM passage_embeddings WHERE model_id = $1) AS pe`,
      [model.id],
    );
    expect(counts.d).toBe(10);
    expect(counts.pe).toBe(counts.p);
    await activateStoredModel(db, model.name, undefined, registry);
    const active = await activeAssignment(db);
    expect(Object.values(active).every((m) => m?.name === model.name)).toBe(true);

    // Documents written without embedding stay recorded; the worker's background finisher takes
    // them (advisory locks on Citus, not FOR UPDATE over shards) and embeds them.
    await ingest(
      db,
      [
        { key: 'late-1', title: 'late one', sections: [{ title: 'a', text: 'the river of germany.' }] },
        { key: 'late-2', title: 'late two', sections: [{ title: 'b', text: 'north and south border.' }] },
      ],
      DEFAULT_INGEST_OPTIONS,
    );
    const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pending_documents'))[0].n;
    // (the first ten were ingested without embedding too: the job embedded them, records stay until finished)
    const before = await count();
    expect(before).toBe(12);
    const targets = await registry.current({ fresh: true });
    expect(targets).toBeDefined();
    expect(await finishPendingStep(db, targets!, { limit: 50, olderThanSeconds: 0 })).toBe(before);
    expect(await count()).toBe(0);
    await registry.close();
  });
});
