/**
 * TransformerEncoder end to end on a tiny BERT-shaped model built here (no download): tokenization,
 * feeds, pooling and normalization are checked against the same math done in plain JS.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncoderError, type EncoderRole } from '../types';
import { TransformerEncoder, type TransformerLoadOptions } from './encoder';
import { buildTinyBertOnnx, makeWeights, referenceHidden, referencePooler, type TinyBertOptions, type TinyBertWeights } from '../../../test/helpers/tiny-bert';
import { id, tinyTokenizerJson, VOCAB, type TinyTokenizerOptions } from '../../../test/helpers/tiny-tokenizer';

const HIDDEN = 8;
const VOCAB_SIZE = Object.keys(VOCAB).length; // 34: the embedding table has exactly the tokenizer's rows
const CLS = id('[CLS]');
const SEP = id('[SEP]');

let root: string;
let seq = 0;
const opened: TransformerEncoder[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'dhr-transformer-'));
});
afterAll(async () => {
  await Promise.all(opened.map((e) => e.close()));
  await rm(root, { recursive: true, force: true });
});

interface Fixture {
  model?: Partial<TinyBertOptions>;
  tokenizer?: TinyTokenizerOptions;
  config?: Record<string, unknown>;
}

/** Writes model.onnx, tokenizer.json and dhr-model.json into a fresh folder. */
async function modelDir(f: Fixture = {}): Promise<{ dir: string; weights: TinyBertWeights }> {
  const dir = join(root, `m${seq++}`);
  const options: TinyBertOptions = { vocabSize: VOCAB_SIZE, hidden: HIDDEN, maxPositions: 24, seed: 42, tokenTypeIds: true, ...f.model };
  const weights = makeWeights(options);
  await mkdir(dir);
  await writeFile(join(dir, 'model.onnx'), buildTinyBertOnnx(options, weights));
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson(f.tokenizer)));
  await writeFile(join(dir, 'dhr-model.json'), JSON.stringify({ name: 'tiny-bert', ...f.config }));
  return { dir, weights };
}

async function load(dir: string, options?: TransformerLoadOptions): Promise<TransformerEncoder> {
  const encoder = await TransformerEncoder.load(dir, options);
  opened.push(encoder);
  return encoder;
}

const meanPool = (h: number[][]) => h[0]!.map((_, j) => h.reduce((s, r) => s + r[j]!, 0) / h.length);
const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

function expectClose(actual: Float32Array, expected: number[]): void {
  expect(actual).toHaveLength(expected.length);
  const diff = Math.max(...expected.map((e, i) => Math.abs(e - actual[i]!)));
  expect(diff).toBeLessThan(1e-5);
}

/** Hand-tokenized: BertNormalizer lowercases, BertPreTokenizer splits off "?" and ":", WordPiece splits "mountains". */
const Q1 = 'What is the capital of France?';
const Q1_IDS = [CLS, ...['what', 'is', 'the', 'capital', 'of', 'france', '?'].map(id), SEP];
const D1 = 'Mountains border Germany.';
const D1_IDS = [CLS, ...['mountain', '##s', 'border', 'germany', '.'].map(id), SEP];
const P1 = 'Paris';
const P1_IDS = [CLS, id('paris'), SEP];

describe('TransformerEncoder on a tiny BERT', () => {
  test('mean pooling + normalize matches the JS computation, with hand-checked token ids', async () => {
    const { dir, weights } = await modelDir();
    const enc = await load(dir);
    expect(enc.name).toBe('tiny-bert');
    expect(enc.runtime).toBe('onnxruntime-node');
    expect(enc.dimension).toBe(HIDDEN);
    expect(enc.normalized).toBe(true);
    const { vectors, stats } = await enc.encode([Q1, D1, P1], 'document');
    expectClose(vectors[0]!, unit(meanPool(referenceHidden(weights, Q1_IDS))));
    expectClose(vectors[1]!, unit(meanPool(referenceHidden(weights, D1_IDS))));
    expectClose(vectors[2]!, unit(meanPool(referenceHidden(weights, P1_IDS))));
    expect(stats).toEqual({ texts: 3, tokens: Q1_IDS.length + D1_IDS.length + P1_IDS.length, truncated: 0 });
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
  });

  test('cls pooling without normalization returns the raw [CLS] state', async () => {
    const { dir, weights } = await modelDir({ config: { pooling: 'cls', normalize: false } });
    const enc = await load(dir);
    expect(enc.normalized).toBe(false);
    const { vectors } = await enc.encode([Q1, D1], 'passage');
    expectClose(vectors[0]!, referenceHidden(weights, Q1_IDS)[0]!);
    expectClose(vectors[1]!, referenceHidden(weights, D1_IDS)[0]!);
    expect(Math.abs(Math.hypot(...vectors[0]!) - 1)).toBeGreaterThan(1e-3);
  });

  test('mean pooling without normalization, cls pooling with it', async () => {
    const mean = await modelDir({ config: { pooling: 'mean', normalize: false } });
    const m = await load(mean.dir);
    expectClose((await m.encode([D1], 'document')).vectors[0]!, meanPool(referenceHidden(mean.weights, D1_IDS)));
    const cls = await modelDir({ config: { pooling: 'cls', normalize: true } });
    const c = await load(cls.dir);
    expectClose((await c.encode([D1], 'document')).vectors[0]!, unit(referenceHidden(cls.weights, D1_IDS)[0]!));
  });

  test('prefixes are added per role', async () => {
    const prefixes = { question: 'query: ', document: 'country: ', passage: 'passage: ' };
    const { dir, weights } = await modelDir({ config: { prefixes, normalize: false } });
    const enc = await load(dir);
    const withPrefix = (prefix: string[], ids: number[]) => [CLS, ...prefix.map(id), ...ids.slice(1)];
    const expected: Record<EncoderRole, number[]> = {
      questionDocument: withPrefix(['query', ':'], P1_IDS),
      questionPassage: withPrefix(['query', ':'], P1_IDS),
      document: withPrefix(['country', ':'], P1_IDS),
      passage: withPrefix(['passage', ':'], P1_IDS),
    };
    for (const [role, ids] of Object.entries(expected) as [EncoderRole, number[]][]) {
      const { vectors, stats } = await enc.encode([P1], role);
      expectClose(vectors[0]!, meanPool(referenceHidden(weights, ids)));
      expect(stats.tokens).toBe(ids.length);
    }
  });

  test('batches of different lengths: padding and batch size do not change results; input order is kept', async () => {
    const { dir } = await modelDir();
    const enc = await load(dir);
    const texts = [D1, P1, Q1, 'the river', P1, 'which country is the largest'];
    const alone = await Promise.all(texts.map(async (t) => (await enc.encode([t], 'passage')).vectors[0]!));
    for (const batchSize of [1, 2, 4, 32]) {
      const { vectors } = await enc.encode(texts, 'passage', { batchSize });
      vectors.forEach((v, i) => expectClose(v, Array.from(alone[i]!)));
    }
    expect((await enc.encode([], 'passage')).vectors).toEqual([]);
  });

  test('truncation keeps [SEP], is counted in stats and matches the truncated computation', async () => {
    const { dir, weights } = await modelDir({ config: { normalize: false } });
    const enc = await load(dir, { maxTokens: { question: 5, document: 6, passage: 9 } });
    expect(enc.maxTokens('questionDocument')).toBe(5);
    expect(enc.maxTokens('document')).toBe(6);
    const { vectors, stats } = await enc.encode([Q1, P1, D1], 'questionPassage');
    expectClose(vectors[0]!, meanPool(referenceHidden(weights, [...Q1_IDS.slice(0, 4), SEP])));
    expectClose(vectors[1]!, meanPool(referenceHidden(weights, P1_IDS)));
    expectClose(vectors[2]!, meanPool(referenceHidden(weights, [...D1_IDS.slice(0, 4), SEP])));
    expect(stats).toEqual({ texts: 3, tokens: 5 + 3 + 5, truncated: 2 });
    // Q1 has exactly 9 tokens: at the passage limit, not over it.
    expect((await enc.encode([Q1], 'passage')).stats.truncated).toBe(0);
  });

  test("the tokenizer's truncation max_length and a fixed sequence dim cap maxTokens", async () => {
    const capped = await modelDir({ tokenizer: { truncationMaxLength: 7 }, config: { maxTokens: { question: 4 } } });
    const a = await load(capped.dir);
    expect([a.maxTokens('questionDocument'), a.maxTokens('document'), a.maxTokens('passage')]).toEqual([4, 7, 7]);

    // Fixed seq 12: every batch is padded to 12, results still match the unpadded math.
    const fixed = await modelDir({ model: { fixedSeq: 12 }, config: { normalize: false } });
    const b = await load(fixed.dir);
    expect(b.maxTokens('document')).toBe(12);
    const { vectors } = await b.encode([P1, Q1], 'document');
    expectClose(vectors[0]!, meanPool(referenceHidden(fixed.weights, P1_IDS)));
    expectClose(vectors[1]!, meanPool(referenceHidden(fixed.weights, Q1_IDS)));
  });

  test('int32 inputs and a model without token_type_ids', async () => {
    const { dir, weights } = await modelDir({ model: { inputType: 'int32', tokenTypeIds: false }, config: { normalize: false } });
    const enc = await load(dir);
    const { vectors } = await enc.encode([Q1, P1], 'document');
    expectClose(vectors[0]!, meanPool(referenceHidden(weights, Q1_IDS)));
    expectClose(vectors[1]!, meanPool(referenceHidden(weights, P1_IDS)));
  });

  test('a 2-D sentence output (pooler_output) is used as it is', async () => {
    const { dir, weights } = await modelDir({ model: { output: 'pooler_output' }, config: { normalize: false, pooling: 'mean' } });
    const enc = await load(dir);
    expect(enc.dimension).toBe(HIDDEN);
    const { vectors } = await enc.encode([Q1, P1], 'document');
    expectClose(vectors[0]!, referencePooler(weights, Q1_IDS));
    expectClose(vectors[1]!, referencePooler(weights, P1_IDS));
  });

  test('a symbolic hidden dim is found by a probe run', async () => {
    const { dir } = await modelDir({ model: { symbolicHidden: true } });
    const enc = await load(dir, { expectDimension: HIDDEN });
    expect(enc.dimension).toBe(HIDDEN);
  });

  test('checksum is sha256 over model.onnx + tokenizer.json + dhr-model.json', async () => {
    const { dir } = await modelDir();
    const enc = await load(dir);
    const hash = createHash('sha256');
    for (const f of ['model.onnx', 'tokenizer.json', 'dhr-model.json']) hash.update(await readFile(join(dir, f)));
    expect(enc.checksum).toBe(hash.digest('hex'));
    await writeFile(join(dir, 'dhr-model.json'), JSON.stringify({ name: 'tiny-bert', pooling: 'cls' }));
    expect((await load(dir)).checksum).not.toBe(enc.checksum);
  });

  test('encode after close is an EncoderError', async () => {
    const { dir } = await modelDir();
    const enc = await TransformerEncoder.load(dir);
    await enc.close();
    await expect(enc.encode(['x'], 'document')).rejects.toThrow(EncoderError);
  });
});

describe('TransformerEncoder errors name the model and the file', () => {
  async function loadError(dir: string, options?: TransformerLoadOptions): Promise<EncoderError> {
    const error = await TransformerEncoder.load(dir, options).then(
      (e) => {
        opened.push(e);
        throw new Error('expected load to fail');
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EncoderError);
    return error as EncoderError;
  }

  test('missing folder', async () => {
    const e = await loadError(join(root, 'nope'));
    expect(e.model).toBe('nope');
    expect(e.message).toContain(join(root, 'nope'));
  });

  test.each(['model.onnx', 'tokenizer.json', 'dhr-model.json'])('missing %s', async (file) => {
    const { dir } = await modelDir();
    await unlink(join(dir, file));
    const e = await loadError(dir);
    expect(e.message).toContain(join(dir, file));
    expect(e.message).toContain('missing');
  });

  test('corrupt model.onnx', async () => {
    const { dir } = await modelDir();
    await writeFile(join(dir, 'model.onnx'), Buffer.from('this is not a protobuf model at all'));
    const e = await loadError(dir);
    expect(e.model).toBe('tiny-bert');
    expect(e.message).toContain(join(dir, 'model.onnx'));
    expect(e.message).toContain('could not be loaded by onnxruntime');
  });

  test('unparseable tokenizer.json, and JSON that is not a tokenizer', async () => {
    const { dir } = await modelDir();
    await writeFile(join(dir, 'tokenizer.json'), '{"model": {"type": "WordPiece", ');
    let e = await loadError(dir);
    expect(e.model).toBe('tiny-bert');
    expect(e.message).toContain(join(dir, 'tokenizer.json'));
    expect(e.message).toContain('not valid JSON');
    await writeFile(join(dir, 'tokenizer.json'), '{"version": "1.0"}');
    e = await loadError(dir);
    expect(e.message).toContain(join(dir, 'tokenizer.json'));
  });

  test('tokenizer ids beyond the embedding rows (found in the graph)', async () => {
    const { dir } = await modelDir({ tokenizer: { extraVocab: { zebra: VOCAB_SIZE + 6 } } });
    const e = await loadError(dir);
    expect(e.model).toBe('tiny-bert');
    expect(e.message).toContain(join(dir, 'tokenizer.json'));
    expect(e.message).toContain(`token id ${VOCAB_SIZE + 6} ("zebra")`);
    expect(e.message).toContain(`embeds only ${VOCAB_SIZE} tokens`);
  });

  test('tokenizer ids beyond the embedding rows (graph hides the table: found by a probe run)', async () => {
    const ok = await modelDir({ model: { embeddingsAsConstant: true } });
    await load(ok.dir); // the probe passes when the tokenizer fits
    const { dir } = await modelDir({ model: { embeddingsAsConstant: true }, tokenizer: { extraVocab: { zebra: VOCAB_SIZE } } });
    const e = await loadError(dir);
    expect(e.message).toContain(join(dir, 'tokenizer.json'));
    expect(e.message).toContain('does not match the model');
    expect(e.message).toContain('probe run');
  });

  test('expectDimension mismatch', async () => {
    const { dir } = await modelDir();
    const e = await loadError(dir, { expectDimension: 384 });
    expect(e.message).toContain(join(dir, 'model.onnx'));
    expect(e.message).toContain('dimension is 8, expected 384');
  });

  test.each([
    [{ pooling: 'max' }, 'field "pooling"'],
    [{ normalize: 'yes' }, 'field "normalize"'],
    [{ maxTokens: { question: 0 } }, 'field "maxTokens.question"'],
    [{ maxTokens: { title: 10 } }, 'field "maxTokens.title"'],
    [{ prefixes: { question: 3 } }, 'field "prefixes.question"'],
    [{ poolng: 'cls' }, 'field "poolng"'],
    [{ name: '' }, 'field "name"'],
  ])('bad dhr-model.json %j', async (config, field) => {
    const { dir } = await modelDir({ config });
    const e = await loadError(dir);
    expect(e.message).toContain(join(dir, 'dhr-model.json'));
    expect(e.message).toContain(field);
  });

  test('dhr-model.json that is not JSON', async () => {
    const { dir } = await modelDir();
    await writeFile(join(dir, 'dhr-model.json'), 'name: tiny');
    const e = await loadError(dir);
    expect(e.message).toContain(join(dir, 'dhr-model.json'));
  });
});
