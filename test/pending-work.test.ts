/**
 * Pending work (migration 0008, src/store/pending.ts, src/pipeline/pending.ts) on the suite's real
 * database: an ingest that does not embed leaves its documents recorded and `stats { pending }`
 * says how much; the job worker finishes them (not while `dhr serve` finishes them itself); a
 * record is cleared only for the write that was finished.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncoderSet } from '../src/encoders/set';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import type { Encoder } from '../src/encoders/types';
import { embedPending } from '../src/pipeline/embed';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { clearFinished, pendingDocuments, pendingWork } from '../src/store/pending';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { writeTinyModel } from './helpers/tiny-model';

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created unchanged updated failed embedded { documents passages } } }`;
const STATS = `{ stats { passages pending { unindexedPassages unembeddedPassages unembeddedDocuments } } }`;

const doc = (i: number, extra = '') => ({
  key: `d-${i}`,
  title: `the capital ${i}`,
  abstract: `the river of germany ${i}.`,
  sections: [{ title: 'north', text: `berlin is a city ${i}. the largest mountain${extra}.` }],
});

describe('pending work', () => {
  let root: string;
  let api: TestApi;
  let tiny: Encoder;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dhr-pending-'));
    tiny = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-p'));
    api = await createTestApi({ EMBED_ON_INGEST: 'false' }, EncoderSet.of({ questionDocument: tiny, document: tiny, questionPassage: tiny, passage: tiny }));
  });
  afterAll(async () => {
    await api.close();
    await api.models?.close();
    await tiny.close();
    await rm(root, { recursive: true, force: true });
  });

  it('an ingest without embedding leaves its documents pending; stats says how much; the worker finishes them', async () => {
    const ingested = dataOf(await api.exec(INGEST, { docs: [doc(1), doc(2), doc(3)] })).ingestDocuments;
    expect(ingested).toMatchObject({ created: 3, failed: 0, embedded: null });
    const before = dataOf(await api.exec(STATS)).stats;
    // Indexed by the ingest itself; not embedded.
    expect(before.pending).toEqual({ unindexedPassages: 0, unembeddedPassages: before.passages, unembeddedDocuments: 3 });

    const db = api.testDb.db;
    const worker = new JobWorker(db, api.models!, { batchSize: 4, pollMs: 10, pendingGraceSeconds: 3600 });
    // Fresh records are left to the ingest that wrote them.
    expect(await worker.step()).toBe(false);
    const eager = new JobWorker(db, api.models!, { batchSize: 4, pollMs: 10, pendingGraceSeconds: 0 });
    while (await eager.step());
    expect(dataOf(await api.exec(STATS)).stats.pending).toEqual({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
    expect(await pendingDocuments(db)).toEqual([]);
    const vectors = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM passage_embeddings');
    expect(vectors[0].n).toBe(before.passages);
  });

  it('a record is cleared only once the rows are complete, and only for the write that was finished', async () => {
    const db = api.testDb.db;
    dataOf(await api.exec(INGEST, { docs: [doc(4)] }));
    const [first] = await pendingDocuments(db);
    // Re-written before a finisher clears: the record now stands for the new write.
    expect(dataOf(await api.exec(INGEST, { docs: [doc(4, ' again')] })).ingestDocuments).toMatchObject({ updated: 1 });
    const [second] = await pendingDocuments(db);
    expect(second.documentId).toBe(first.documentId);
    expect(second.generation).not.toBe(first.generation);
    // Not embedded yet: nothing to clear.
    expect(await clearFinished(db, [second])).toBe(0);
    await embedPending(db, (await api.models!.current())!, { documentIds: [second.documentId] });
    // Complete now, but a finisher of the first write must not clear the second's record.
    expect(await clearFinished(db, [first])).toBe(0);
    expect(await pendingDocuments(db)).toHaveLength(1);
    expect(await clearFinished(db, [second])).toBe(1);
    expect(await pendingWork(db)).toEqual({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
  });

  it("leaves pending records to the server's own first-start finisher while it runs (finishPendingNow)", async () => {
    const db = api.testDb.db;
    dataOf(await api.exec(INGEST, { docs: [doc(5), doc(6)] }));
    let serverFinishing = true;
    const worker = new JobWorker(db, api.models!, { batchSize: 4, pollMs: 10, pendingGraceSeconds: 0, finishPendingNow: () => !serverFinishing });
    expect(await worker.step()).toBe(false);
    expect(await pendingDocuments(db)).toHaveLength(2);
    expect((await pendingWork(db)).unembeddedDocuments).toBe(2);
    serverFinishing = false;
    while (await worker.step());
    expect(await pendingDocuments(db)).toEqual([]);
    expect(await pendingWork(db)).toEqual({ unindexedPassages: 0, unembeddedPassages: 0, unembeddedDocuments: 0 });
  });
});
