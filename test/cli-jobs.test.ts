/**
 * The model-switching CLI end to end (real processes, the suite's database): register a model the
 * test builds, re-embed with a progress bar, activate, list, and a worker that exits when idle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliStore, dhr } from './helpers/cli';
import { writeTinyModel } from './helpers/tiny-model';

describe('dhr models / reembed / jobs / worker', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-cli-jobs-'));
  let env: Record<string, string>;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ env, drop } = await cliStore(work));
  });
  afterAll(async () => {
    await drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('switches a store to a new model from the command line', async () => {
    const docs = Array.from({ length: 6 }, (_, i) => ({ title: `the city ${i}`, sections: [{ title: 'river', text: `the river of paris ${i}.` }] }));
    writeFileSync(join(work, 'docs.json'), JSON.stringify(docs));
    expect((await dhr(['ingest', join(work, 'docs.json'), '--no-embed'], env)).code).toBe(0);
    const dir = await writeTinyModel(work, 'tiny-cli');

    const registered = await dhr(['models', 'register', dir], env);
    expect(registered.code).toBe(0);
    expect(registered.stderr).toContain('registered tiny-cli (8-d)');

    const early = await dhr(['models', 'activate', 'tiny-cli'], env);
    expect(early.code).toBe(1);
    expect(early.stderr).toMatch(/lacks current embeddings for 6 documents and 6 passages/);

    const job = await dhr(['reembed', '--model', 'tiny-cli', '--scope', 'stale'], env);
    expect(job.code).toBe(0);
    expect(job.stderr).toMatch(/job 1: 6 documents and 6 passages for tiny-cli/);
    expect(job.stderr).toMatch(/passages \[#+\] 6\/6/);
    expect(job.stdout).toMatch(/job 1 succeeded: 6 documents, 6 passages/);

    expect((await dhr(['models', 'activate', 'tiny-cli', '--roles', 'document,questionDocument'], env)).code).toBe(0);
    const models = JSON.parse((await dhr(['models'], env)).stdout);
    expect(models).toEqual([
      expect.objectContaining({ name: 'tiny-cli', roles: expect.arrayContaining(['document', 'questionDocument']), documents: 6, passages: 6 }),
    ]);
    expect(models[0].roles).toHaveLength(2);

    const jobs = JSON.parse((await dhr(['jobs', '--status', 'succeeded'], env)).stdout);
    expect(jobs).toEqual([expect.objectContaining({ id: 1, model: 'tiny-cli', status: 'succeeded', passagesDone: 6 })]);
    expect((await dhr(['jobs', 'cancel', '1'], env)).stderr).toMatch(/job 1 has already succeeded/);
    // Ingest jobs are listed apart: this store has had none.
    expect(JSON.parse((await dhr(['jobs', '--ingest'], env)).stdout)).toEqual([]);
    expect((await dhr(['jobs', 'cancel', '--ingest', '1'], env)).stderr).toMatch(/no ingest job with id 1/);

    const idle = await dhr(['worker', '--exit-when-idle'], env);
    expect(idle.code).toBe(0);
    expect((await dhr(['models', 'drop', 'tiny-cli'], env)).stderr).toMatch(/serves questionDocument, document|serves document, questionDocument/);
  });
});
