/**
 * Documents waiting in ingest jobs are pending work: `stats { pending { queued } }` and /readyz's
 * coverage count the documents and bytes of queued and running jobs, which no other count holds
 * until a batch writes them, so a client waiting for "nothing pending" does not ask too early.
 */
import { loadConfig } from '../src/config';
import { ingestJobOptions, JobWorker } from '../src/pipeline/jobs/worker';
import { useTestServer } from './helpers/server';

// Jobs from 3 documents on, written 2 at a time; no worker of the server's own: the test steps one.
const ENV = { INGEST_JOB_DOCUMENTS: '2', INGEST_JOB_BATCH_DOCUMENTS: '2', JOB_WORKERS: '0' };
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created job { id status } } }`;
const STATS = `{ stats { documents pending { unindexedPassages unembeddedPassages unembeddedDocuments queued { jobs documents bytes } } } }`;
const doc = (i: number) => ({ key: `q${i}`, title: `Harbour ${i}`, text: `The harbour of town ${i} has a lighthouse and ${i} piers.` });

describe('queued ingest counted as pending', () => {
  const server = useTestServer(ENV);

  it('counts the documents and bytes of queued and running jobs in stats and /readyz, and nothing once they are written', async () => {
    const docs = Array.from({ length: 5 }, (_, i) => doc(i));
    const queued = (await server.post(INGEST, { docs })).body.data.ingestDocuments;
    expect(queued).toMatchObject({ created: 0, job: { status: 'QUEUED' } });

    const waiting = (await server.post(STATS)).body.data.stats;
    // Nothing is written yet: every other count is 0, and only `queued` says the corpus is not in.
    expect(waiting.documents).toBe(0);
    expect(waiting.pending).toMatchObject({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
    expect(waiting.pending.queued).toMatchObject({ jobs: 1, documents: 5 });
    expect(waiting.pending.queued.bytes).toBeGreaterThanOrEqual(JSON.stringify(docs).length - 10);

    const ready = await (await fetch(new URL('/readyz', server.url))).json();
    expect(ready.coverage).toEqual({ documents: { total: 0, embedded: 0 }, passages: { total: 0, embedded: 0 }, queued: waiting.pending.queued });

    const worker = new JobWorker(server.db, undefined, { batchSize: 32, ingest: ingestJobOptions(loadConfig(ENV)) });
    expect(await worker.step()).toBe(true);
    // One batch of 2 written; the running job still holds 3, and fewer bytes.
    const running = (await server.post(STATS)).body.data.stats;
    expect(running.documents).toBe(2);
    expect(running.pending.queued).toMatchObject({ jobs: 1, documents: 3 });
    expect(running.pending.queued.bytes).toBeLessThan(waiting.pending.queued.bytes);
    expect(running.pending.queued.bytes).toBeGreaterThan(0);

    while (await worker.step());
    const done = (await server.post(STATS)).body.data.stats;
    expect(done.documents).toBe(5);
    expect(done.pending.queued).toEqual({ jobs: 0, documents: 0, bytes: 0 });
  });
});
