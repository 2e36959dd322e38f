/**
 * What `dhr serve` embeds while it answers (src/cli/serve-embedding.ts), on the suite's
 * real database with a tiny model the test builds: while the embedding is held mid-way, /readyz
 * answers 200 with the coverage so far and a retrieve is answered; the progress counts documents,
 * then passages, to their totals; the last line's totals are the store's coverage, also when
 * another writer embedded part of the corpus meanwhile. And the server's corpus encoder thread
 * (BulkThreadEncoder) gives the vectors the model gives on the main thread.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { loadConfig } from '../src/config';
import { embedWhileServing, serveEncoderThreads } from '../src/cli/serve-embedding';
import { EncoderSet, loadEncoder } from '../src/encoders/set';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import type { Encoder } from '../src/encoders/types';
import { embedPending } from '../src/pipeline/embed';
import { ingest } from '../src/pipeline/ingest';
import { ModelRegistry } from '../src/pipeline/jobs/registry';
import { startServer } from '../src/server';
import { coverage } from '../src/store/coverage';
import { createTestDatabase, type TestDatabase } from './helpers/database';
import { HeldEncoder } from './helpers/held-encoder';
import { captureLog } from './helpers/log-capture';
import { writeTinyModel } from './helpers/tiny-model';

const words = ['the', 'capital', 'city', 'river', 'population', 'largest', 'north', 'south', 'border', 'mountain'];
const sentence = (i: number, j: number) => `${words[(i + j) % words.length]} ${words[(i * 3 + j) % words.length]} of germany ${i} ${j}.`;

/** Six documents of four sections each: 24 passages or more (sections split by MAX_WORDS). */
const corpus = Array.from({ length: 6 }, (_, i) => ({
  key: `doc-${i}`,
  title: `the country ${i}`,
  abstract: `${sentence(i, 0)}`,
  sections: Array.from({ length: 4 }, (_, j) => ({ title: `${words[j]} ${j}`, text: `${sentence(i, j)} ${sentence(i, j + 1)}` })),
}));

const RETRIEVE = `{ retrieve(question: "what is the capital of germany", k2: 5) {
  passages { rank passage { id } }
  coverage { documents { total embedded } passages { total embedded } } } }`;

function captured(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => (text += d));
  return { stream, text: () => text };
}

/** The last line's counts: embedded X/Y documents and A/B passages. */
function lastLine(text: string): { documents: { embedded: number; total: number }; passages: { embedded: number; total: number } } {
  const m = /embedded (\d+)\/(\d+) documents and (\d+)\/(\d+) passages .*\(coverage\)/.exec(text);
  if (!m) throw new Error(`no last line in: ${text}`);
  return { documents: { embedded: +m[1], total: +m[2] }, passages: { embedded: +m[3], total: +m[4] } };
}

describe('embedding while serving', () => {
  let root: string;
  let tiny: Encoder;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'dhr-serve-embed-'));
    tiny = await TransformerEncoder.load(await writeTinyModel(root, 'tiny-s'));
  });
  afterAll(async () => {
    await tiny.close();
    await rm(root, { recursive: true, force: true });
  });

  async function store(encoders: EncoderSet): Promise<{ t: TestDatabase; models: ModelRegistry }> {
    const t = await createTestDatabase();
    const config = loadConfig({});
    // Written as the demo corpus is: indexed and recorded as pending, not embedded.
    const result = await ingest(t.db, corpus, { ...config.ingest, splitFor: async () => tiny });
    expect(result.failed).toBe(0);
    const models = await ModelRegistry.of(t.db, encoders);
    return { t, models };
  }

  it('answers /readyz (200, with coverage) and retrieve while the embedding is held mid-way; the last line is the coverage', async () => {
    // Its own model name: the registry serves a model's roles from one encoder, and only the corpus roles are held.
    const held = new HeldEncoder(tiny, 'tiny-held', 'tiny-held-checksum');
    const encoders = EncoderSet.of({ questionDocument: tiny, document: held, questionPassage: tiny, passage: held });
    const { t, models } = await store(encoders);
    const config = loadConfig({ PORT: '0', JOB_WORKERS: '0' });
    const log = captureLog();
    const server = await startServer(t.db, config, models, { logDestination: log.destination });
    const out = captured();
    try {
      const targets = (await models.current())!;
      // The documents' batch runs; the first passages' batch is held.
      const documentsHeld = held.hold();
      expect(targets.encoders.byRole.document).toBe(held);
      const embedding = embedWhileServing(t.db, targets, config, { stream: out.stream });
      await documentsHeld;
      // Released, and held again before the held run resumes (a microtask later): the next run waits.
      held.release();
      const passagesHeld = held.hold();
      await passagesHeld;

      const ready = await fetch(new URL('/readyz', server.url));
      expect(ready.status).toBe(200);
      const report = (await ready.json()) as {
        status: string;
        coverage: { documents: { total: number; embedded: number }; passages: { total: number; embedded: number } };
      };
      expect(report.status).toBe('ready');
      const total = await coverage(t.db, { document: targets.document.id, passage: targets.passage.id });
      expect(report.coverage).toEqual({
        documents: { total: corpus.length, embedded: corpus.length },
        passages: { total: total.passages.total, embedded: 0 },
        queued: { jobs: 0, documents: 0, bytes: 0 },
      });

      // A question meanwhile: answered (BM25 finds the passages without vectors), and it says how much it could see.
      const response = await fetch(server.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: RETRIEVE }) });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { retrieve: { passages: unknown[]; coverage: { passages: { embedded: number; total: number } } } } };
      expect(body.data.retrieve.passages.length).toBeGreaterThan(0);
      expect(body.data.retrieve.coverage.passages).toEqual({ total: total.passages.total, embedded: 0 });

      held.release();
      const result = await embedding;
      const after = await coverage(t.db, { document: targets.document.id, passage: targets.passage.id });
      expect(after.passages.embedded).toBe(after.passages.total);
      expect(result.coverage).toEqual(after);
      expect(lastLine(out.text())).toEqual({
        documents: { embedded: after.documents.embedded, total: after.documents.total },
        passages: { embedded: after.passages.embedded, total: after.passages.total },
      });
      // Progress: documents, then passages, each counted to its total.
      const lines = out.text().split('\n');
      const progress = (level: string) => lines.filter((l) => l.startsWith(`embed ${level}`));
      expect(progress('documents').at(-1)).toContain(` ${corpus.length}/${corpus.length} `);
      expect(progress('passages').at(-1)).toContain(` ${after.passages.total}/${after.passages.total} `);
      expect(progress('passages').at(-1)).toMatch(/\d+(\.\d)?\/s/);
      expect(lines.findIndex((l) => l.startsWith('embed documents'))).toBeLessThan(lines.findIndex((l) => l.startsWith('embed passages')));
    } finally {
      held.release();
      await server.stop();
      await t.drop();
    }
  }, 120_000);

  it('the last line reports the coverage, not what this run wrote, when another writer embedded part of it', async () => {
    const encoders = EncoderSet.of({ questionDocument: tiny, document: tiny, questionPassage: tiny, passage: tiny });
    const { t, models } = await store(encoders);
    const out = captured();
    try {
      const targets = (await models.current())!;
      // Another writer (a job worker, an ingest) embedded the first two documents already.
      const [{ ids }] = await t.db.query<{ ids: number[] }>(`SELECT array_agg(id ORDER BY id) AS ids FROM documents`);
      const other = await embedPending(t.db, targets, { documentIds: ids.slice(0, 2) });
      expect(other.documents).toBe(2);
      const result = await embedWhileServing(t.db, targets, loadConfig({}), { stream: out.stream });
      expect(result.embedded).toMatchObject({ documents: corpus.length - 2 });
      const after = await coverage(t.db, { document: targets.document.id, passage: targets.passage.id });
      expect(after.documents).toMatchObject({ total: corpus.length, embedded: corpus.length });
      expect(after.passages.embedded).toBe(after.passages.total);
      expect(result.embedded!.passages).toBe(after.passages.total - other.passages);
      const last = lastLine(out.text());
      expect(last).toEqual({
        documents: { embedded: corpus.length, total: corpus.length },
        passages: { embedded: after.passages.total, total: after.passages.total },
      });
      expect(out.text()).toContain(`this start wrote ${corpus.length - 2} documents and ${after.passages.total - other.passages} passages`);
    } finally {
      await t.drop();
    }
  }, 120_000);

  it("the server's corpus encoder thread gives the vectors the model gives on the main thread (passages and questions)", async () => {
    const dir = join(root, 'tiny-s');
    const threaded = await loadEncoder(dir, { threads: 1, bulkThread: true });
    try {
      const texts = corpus.flatMap((d) => d.sections.map((s) => s.text));
      const inWorker = await threaded.encode(texts, 'passage');
      const onMain = await tiny.encode(texts, 'passage');
      expect(inWorker.stats).toEqual(onMain.stats);
      inWorker.vectors.forEach((v, i) => expect(Array.from(v)).toEqual(Array.from(onMain.vectors[i])));
      const question = await threaded.encode(['what is the capital'], 'questionPassage');
      expect(Array.from(question.vectors[0])).toEqual(Array.from((await tiny.encode(['what is the capital'], 'questionPassage')).vectors[0]));
      expect(threaded.checksum).toBe(tiny.checksum);
    } finally {
      await threaded.close();
    }
  }, 60_000);

  it('bulk encoder threads while serving: ENCODER_THREADS when set, else every core but one', () => {
    expect(serveEncoderThreads({ encoderThreads: 3 }, 8)).toBe(3);
    expect(serveEncoderThreads({ encoderThreads: 0 }, 8)).toBe(7);
    expect(serveEncoderThreads({ encoderThreads: 0 }, 2)).toBe(1);
    expect(serveEncoderThreads({ encoderThreads: 0 }, 1)).toBe(1);
  });
});
