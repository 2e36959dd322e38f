/**
 * Model activation and ingest meet safely: a document is either seen by the activation's coverage
 * check or embedded for the model the activation made active — never left without vectors for the
 * model that serves it (which retrieval would then silently miss).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { EncoderSet } from '../src/encoders/set';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import type { Encoder } from '../src/encoders/types';
import { prepareDocument } from '../src/ingest/prepare';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { JobWorker } from '../src/pipeline/jobs/worker';
import { activateModel } from '../src/store/active';
import { getJob } from '../src/store/jobs';
import { writeDocumentIn } from '../src/store/write';
import { createTestApi, dataOf, type TestApi } from './helpers/api';
import { writeTinyModel } from './helpers/tiny-model';

const doc = (key: string) => ({
  key,
  title: `${key} capital`,
  abstract: 'The capital of France is Paris.',
  sections: [{ title: 'rivers', text: 'The Seine flows through Paris. The Loire is longer.' }],
});
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created embedded { documents passages } } }`;

describe('activation and ingest', () => {
  let root: string;
  let api: TestApi;
  let tinyA: Encoder;

  const vectors = async (key: string) =>
    (
      await api.testDb.db.query<{ model: string; documents: number; passages: number; total: number }>(
        `SELECT m.name AS model,
                (SELECT count(*)::int FROM document_embeddings e JOIN documents d ON d.id = e.document_id WHERE e.model_id = m.id AND d.key = $1) AS documents,
                (SELECT count(*)::int FROM passage_embeddings e JOIN documents d ON d.id = e.document_id WHERE e.model_id = m.id AND d.key = $1) AS passages,
                (SELECT count(*)::int FROM passages p JOIN documents d ON d.id = p.document_id WHERE d.key = $1) AS total
         FROM embedding_models m ORDER BY m.name`,
        [key],
      )
    ).map((r) => ({ ...r, complete: r.documents === 1 && r.passages === r.total && r.total > 0 }));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dhr-activation-'));
    tinyA = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-a', { seed: 1 }));
    // A snapshot that outlives the test: this server would otherwise keep embedding for tiny-a.
    api = await createTestApi({ MODELS_DIR: root }, EncoderSet.of({ questionDocument: tinyA, document: tinyA, questionPassage: tinyA, passage: tinyA }), {
      registry: { ttlMs: 3_600_000 },
    });
    dataOf(await api.exec(INGEST, { docs: [doc('before-1'), doc('before-2')] }));
    // tiny-b registered and complete, but not active yet.
    dataOf(await api.exec(`mutation($p: String!) { registerEmbeddingModel(path: $p) { name } }`, { p: await writeTinyModel(root, 'tiny-b', { seed: 2 }) }));
    const job = dataOf(await api.exec(`mutation { reembed(model: "tiny-b") { id } }`)).reembed;
    await new JobWorker(api.testDb.db, api.models!, { batchSize: 8, pollMs: 10 }).run({
      until: async () => (await getJob(api.testDb.db, Number(job.id)))!.status === 'succeeded',
    });
  });
  afterAll(async () => {
    await api.close();
    await api.models?.close();
    await tinyA.close();
    await rm(root, { recursive: true, force: true });
  });

  it('a document written in a transaction holds off activations until it commits', async () => {
    const prepared = prepareDocument(doc('locked'), DEFAULT_INGEST_OPTIONS, 'locked');
    let held: { mode: string }[] = [];
    const rollback = new Error('roll back: the document is only for this look at the locks');
    await expect(
      api.testDb.db.transaction(async (tx) => {
        await writeDocumentIn(tx, prepared);
        held = await tx.query<{ mode: string }>(
          `SELECT mode FROM pg_locks WHERE locktype = 'relation' AND relation = 'active_encoders'::regclass AND pid = pg_backend_pid() AND granted`,
        );
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    // ROW SHARE conflicts with activation's EXCLUSIVE lock and with nothing an ingest or a reader takes.
    expect(held.map((l) => l.mode)).toContain('RowShareLock');
  });

  it('after another process activates a model, ingest embeds new documents for it, not for the cached one', async () => {
    // The server's snapshot says tiny-a; the switch happens elsewhere (another server, the CLI).
    expect((await api.models!.current())!.passage.name).toBe('tiny-a');
    await activateModel(api.testDb.db, 'tiny-b');
    const ingested = dataOf(await api.exec(INGEST, { docs: [doc('after')] })).ingestDocuments;
    expect(ingested.created).toBe(1);
    const after = await vectors('after');
    expect(after.find((v) => v.model === 'tiny-b')).toMatchObject({ complete: true });
    // …and not for the model that no longer serves.
    expect(after.find((v) => v.model === 'tiny-a')).toMatchObject({ documents: 0, passages: 0 });
    // Retrieval serves tiny-b now and the new document is in its index: it can be found.
    const found = dataOf(
      await api.exec(`{ retrieve(question: "after capital", k1: 10, k2: 50, exact: true) { model passages { passage { document { key } } } } }`),
    ).retrieve;
    expect(found.model).toBe('tiny-b');
    expect(found.passages.map((p: { passage: { document: { key: string } } }) => p.passage.document.key)).toContain('after');
  });

  // Two connections are needed to hold an activation open while a document is written: a server.
  (process.env.DATABASE_URL ? it : it.skip)('PostgreSQL: a document waits while an activation is in flight, then lands after it', async () => {
    const activation = new Client({ connectionString: api.testDb.url });
    await activation.connect();
    try {
      await activation.query('BEGIN');
      await activation.query('LOCK TABLE active_encoders IN EXCLUSIVE MODE'); // as activateModel does
      let landed = false;
      const ingest = api.exec(INGEST, { docs: [doc('waiting')] }).then((r) => {
        landed = true;
        return r;
      });
      // The ingest's backend queues for the lock (observed, not timed).
      const waiting = async () =>
        (
          await activation.query(
            `SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'active_encoders'::regclass AND NOT granted AND pid <> pg_backend_pid()`,
          )
        ).rows[0].n as number;
      for (let i = 0; i < 800 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(await waiting()).toBe(1);
      expect(landed).toBe(false);
      const [{ n }] = (await activation.query(`SELECT count(*)::int AS n FROM documents WHERE key = 'waiting'`)).rows;
      expect(n).toBe(0);
      await activation.query('COMMIT');
      expect(dataOf(await ingest).ingestDocuments.created).toBe(1);
    } finally {
      await activation.query('ROLLBACK').catch(() => undefined);
      await activation.end();
    }
  });
});
