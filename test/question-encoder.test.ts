/**
 * Question micro-batching and the question-vector cache (src/encoders/questions.ts) on a real
 * model: a tiny BERT-shaped ONNX model built by the test, and USE-lite for parity.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DomainError, ErrorCode } from '../src/errors';
import { QuestionEncoder } from '../src/encoders/questions';
import { TransformerEncoder } from '../src/encoders/transformer/encoder';
import { UseLiteEncoder } from '../src/encoders/use-lite/encoder';
import { RecordingEncoder } from './helpers/recording-encoder';
import { writeTinyModel } from './helpers/tiny-model';
import { WORDS } from './helpers/tiny-tokenizer';

const TEXT = WORDS.filter((w) => /^[a-z]+$/.test(w));
const question = (i: number) => `${TEXT[i % TEXT.length]} ${TEXT[(i * 7 + 3) % TEXT.length]} ${TEXT[(i * 13 + 5) % TEXT.length]} ${i}`;

function expectClose(a: Float32Array, b: Float32Array): void {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-5);
}

let root: string;
let tiny: TransformerEncoder;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dhr-questions-'));
  tiny = await TransformerEncoder.load(await writeTinyModel(root, 'q-tiny', { hidden: 16 }));
});
afterAll(async () => {
  await tiny.close();
  await rm(root, { recursive: true, force: true });
});

describe('question micro-batching', () => {
  it('encodes concurrent questions in shared runs of at most maxBatch, with the vectors of one-by-one encodes', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 4, maxWaiting: 100, cacheEntries: 0 });
    const texts = Array.from({ length: 10 }, (_, i) => question(i));
    const batched = await Promise.all(texts.map((t) => q.encode(t)));
    expect(model.calls.length).toBeLessThan(texts.length);
    expect(Math.max(...model.calls.map((c) => c.length))).toBeLessThanOrEqual(4);
    expect(model.calls.flat().sort()).toEqual([...texts].sort());
    for (const [i, t] of texts.entries()) {
      const alone = (await tiny.encode([t], 'questionPassage')).vectors[0];
      expectClose(batched[i].vector, alone);
      expect(batched[i].stats).toEqual({ texts: 1, tokens: expect.any(Number), truncated: 0 });
    }
  });

  it('gives USE-lite questions batched together the vectors they get alone', async () => {
    const useLite = await UseLiteEncoder.load();
    try {
      const model = new RecordingEncoder(useLite);
      const q = new QuestionEncoder(model, 'questionDocument', { maxBatch: 16, maxWaiting: 100, cacheEntries: 0 });
      const texts = ['What is the capital of Norway?', 'population', 'Which rivers flow through the country and where do they end?', ''];
      const batched = await Promise.all(texts.map((t) => q.encode(t)));
      // Asked in the same turn, within maxBatch: one model run of all four, in order.
      expect(model.calls).toEqual([texts]);
      for (const [i, t] of texts.entries()) expectClose(batched[i].vector, (await useLite.encode([t], 'questionDocument')).vectors[0]);
    } finally {
      await useLite.close();
    }
  });

  it('lets identical questions in flight share one slot', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 8, maxWaiting: 1, cacheEntries: 0 });
    const [a, b, c] = await Promise.all([q.encode('same question'), q.encode('same question'), q.encode('same question')]);
    expect(model.calls).toEqual([['same question']]);
    expect(b.vector).toBe(a.vector);
    expect(c.vector).toBe(a.vector);
  });

  it('refuses questions beyond maxWaiting with OVERLOADED and answers the rest', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 2, maxWaiting: 4, cacheEntries: 0 });
    let most = 0;
    const texts = Array.from({ length: 40 }, (_, i) => question(100 + i));
    const outcomes = await Promise.allSettled(
      texts.map((t) => {
        const p = q.encode(t);
        most = Math.max(most, q.queued);
        return p;
      }),
    );
    expect(most).toBeLessThanOrEqual(4);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    const answered = outcomes.filter((o) => o.status === 'fulfilled');
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(0);
    for (const o of refused) {
      const reason = (o as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(DomainError);
      expect((reason as DomainError).code).toBe(ErrorCode.OVERLOADED);
    }
    // Refused questions are not stuck: they are answered once the queue drains.
    expect((await q.encode(texts[39])).vector).toHaveLength(tiny.dimension);
  });

  it('rejects every question of a failed run, and the next questions still work', async () => {
    const failing = new RecordingEncoder(tiny);
    let fail = true;
    const encode = failing.encode.bind(failing);
    failing.encode = (texts, role, options) => (fail ? Promise.reject(new Error('model run failed')) : encode(texts, role, options));
    const q = new QuestionEncoder(failing, 'questionPassage', { maxBatch: 8, maxWaiting: 8, cacheEntries: 8 });
    const outcomes = await Promise.allSettled([q.encode('one'), q.encode('two')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect((await q.encode('one')).vector).toHaveLength(tiny.dimension);
  });
});

describe('question-vector cache', () => {
  it('answers a repeated question with the model’s vector without running the model', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 4, maxWaiting: 10, cacheEntries: 10 });
    const first = await q.encode('where is the river');
    const again = await q.encode('where is the river');
    expect(model.calls).toEqual([['where is the river']]);
    expectClose(again.vector, (await tiny.encode(['where is the river'], 'questionPassage')).vectors[0]);
    expect(again).toBe(first);
  });

  it('is bounded: the least recently asked question is evicted and encoded again', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 4, maxWaiting: 10, cacheEntries: 3 });
    for (let i = 0; i < 5; i++) await q.encode(question(200 + i));
    expect(model.calls).toHaveLength(5);
    await q.encode(question(204)); // cached
    expect(model.calls).toHaveLength(5);
    await q.encode(question(200)); // evicted by the 4th and 5th
    expect(model.calls).toHaveLength(6);
  });

  it('keeps nothing with cacheEntries 0', async () => {
    const model = new RecordingEncoder(tiny);
    const q = new QuestionEncoder(model, 'questionPassage', { maxBatch: 4, maxWaiting: 10, cacheEntries: 0 });
    await q.encode('again and again');
    await q.encode('again and again');
    expect(model.calls).toHaveLength(2);
  });
});
