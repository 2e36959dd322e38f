import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adaptQuestion, applyMap, decodeWeights, encodeWeights, identityMap, isIdentity, type LinearMap } from '../src/adapters/linear';
import { PairsFileError, readPairs, type TrainingPair } from '../src/adapters/pairs-file';
import { trainLinearMap } from '../src/adapters/train';
import { DomainError, ErrorCode } from '../src/errors';
import { relativeMapError, syntheticAdapterData } from './helpers/adapter-data';
import { prng } from './helpers/prng';

/** The pure parts of the query-side adapter: the map, its training, the pairs file. */

function unitVector(d: number, rand: () => number): Float32Array {
  const v = Float32Array.from({ length: d }, () => rand() - 0.5);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function randomMap(d: number, rand: () => number, size = 0.3): LinearMap {
  return { dim: d, w: Float32Array.from({ length: d * d }, () => (rand() - 0.5) * size), b: Float32Array.from({ length: d }, () => (rand() - 0.5) * size) };
}

describe('the residual linear map', () => {
  it('is the identity bit for bit when untrained (W = 0, b = 0)', () => {
    const rand = prng(1);
    for (const d of [1, 7, 16, 512]) {
      const map = identityMap(d);
      for (let i = 0; i < 20; i++) {
        const q = unitVector(d, rand);
        expect(Buffer.from(applyMap(map, q).buffer)).toEqual(Buffer.from(q.buffer));
      }
    }
  });

  it('computes q + Wq + b rescaled to ‖q‖', () => {
    const rand = prng(2);
    const d = 9;
    const map = randomMap(d, rand);
    const q = unitVector(d, rand);
    const z = Array.from({ length: d }, (_, r) => q[r] + map.b[r] + q.reduce((s, x, c) => s + map.w[r * d + c] * x, 0));
    const n = Math.hypot(...z);
    const out = applyMap(map, q);
    z.forEach((x, r) => expect(out[r]).toBeCloseTo(x / n, 6));
    expect(Math.hypot(...out)).toBeCloseTo(1, 6);
  });

  it('maps only the levels it has, and refuses a vector of another dimension', () => {
    const rand = prng(3);
    const question = { document: unitVector(8, rand), passage: unitVector(8, rand) };
    const adapted = adaptQuestion({ name: 'p', dim: 8, maps: { passage: randomMap(8, rand) } }, question);
    expect(adapted.document).toBe(question.document);
    expect(adapted.passage).not.toEqual(question.passage);
    const error = (() => {
      try {
        applyMap(identityMap(8), unitVector(16, rand));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.DIMENSION_MISMATCH);
  });

  it('round-trips its weights through bytes, and refuses bytes of another size', () => {
    const map = randomMap(5, prng(4));
    const back = decodeWeights(encodeWeights(map), 5);
    expect(back.w).toEqual(map.w);
    expect(back.b).toEqual(map.b);
    expect(() => decodeWeights(encodeWeights(map), 6)).toThrow(/a 6-d map needs/);
  });
});

describe('training', () => {
  it('recovers a known map where the identity fails', () => {
    const d = 16;
    const { data, wStar } = syntheticAdapterData({ pairs: 2000, targets: 500, dim: d, seed: 3 });
    const result = trainLinearMap(data, { epochs: 30, lr: 0.01, l2: 0, temperature: 0.02, patience: 3, seed: 5 });
    const best = result.curve[result.bestEpoch - 1].heldOut;
    // The identity ranks few positives first; the learned map nearly all.
    expect(result.baseline.accuracy).toBeLessThan(0.5);
    expect(best.accuracy).toBeGreaterThan(0.95);
    expect(best.loss).toBeLessThan(result.baseline.loss / 5);
    // And it is the map: up to scale (the rescale ignores it), far closer to W* than the identity.
    const learned = relativeMapError(result.map.w, wStar, d);
    const identity = relativeMapError(new Float32Array(d * d), wStar, d);
    expect(learned).toBeLessThan(identity * 0.5);
    expect(result.pairs).toEqual({ train: 1800, heldOut: 200 });
  });

  it('recovers a low-rank map with a low-rank W (diag + U Vᵀ), starting from the identity', () => {
    const d = 16;
    const { data, wStar } = syntheticAdapterData({ pairs: 2000, targets: 500, dim: d, rank: 3, seed: 4 });
    const result = trainLinearMap(data, { epochs: 30, lr: 0.01, l2: 0, temperature: 0.02, patience: 3, seed: 5, rank: 3 });
    const best = result.curve[result.bestEpoch - 1].heldOut;
    expect(result.baseline.accuracy).toBeLessThan(0.5);
    expect(best.accuracy).toBeGreaterThan(0.9);
    expect(relativeMapError(result.map.w, wStar, d)).toBeLessThan(relativeMapError(new Float32Array(d * d), wStar, d) * 0.6);
    // Untrained, it is the identity exactly: the map kept when no epoch runs better is W = 0.
    const untrained = trainLinearMap(data, { epochs: 1, lr: 1e-12, seed: 5, rank: 3 });
    expect(untrained.curve[0].heldOut.loss).toBeCloseTo(untrained.baseline.loss, 6);
  });

  it('is deterministic under a seed, and another seed gives another run', () => {
    const { data } = syntheticAdapterData({ pairs: 300, targets: 100, dim: 8, seed: 9 });
    const options = { epochs: 3, lr: 0.01, seed: 11 };
    const a = trainLinearMap(data, options);
    const b = trainLinearMap(data, options);
    const c = trainLinearMap(data, { ...options, seed: 12 });
    expect(b.map.w).toEqual(a.map.w);
    expect(b.curve).toEqual(a.curve);
    expect(c.map.w).not.toEqual(a.map.w);
  });

  it('keeps the identity when no epoch beats it on held-out pairs', () => {
    // Questions are their positives already, and a huge step only makes things worse.
    const { data } = syntheticAdapterData({ pairs: 200, targets: 200, dim: 8, distortion: 0, seed: 2 });
    const result = trainLinearMap(data, { epochs: 3, lr: 1, seed: 1 });
    expect(result.baseline.accuracy).toBe(1);
    expect(result.curve.every((e) => e.heldOut.loss >= result.baseline.loss)).toBe(true);
    expect(result.bestEpoch).toBe(0);
    expect(isIdentity(result.map)).toBe(true);
  });

  it('refuses too few pairs and bad settings with typed errors', () => {
    const { data } = syntheticAdapterData({ pairs: 10, targets: 10, dim: 4, seed: 1 });
    const fail = (options: Parameters<typeof trainLinearMap>[1]) => {
      try {
        trainLinearMap(data, options);
      } catch (error) {
        return error as DomainError;
      }
      throw new Error('expected a refusal');
    };
    const few = fail({});
    expect(few.code).toBe(ErrorCode.BAD_USER_INPUT);
    expect(few.argument).toBe('pairs');
    expect(few.message).toMatch(/10 training pairs are too few.*at least 20/);
    expect(fail({ minPairs: 2, temperature: 0 }).argument).toBe('temperature');
    expect(fail({ minPairs: 2, holdout: 1 }).argument).toBe('holdout');
    expect(fail({ minPairs: 2, epochs: 0 }).argument).toBe('epochs');
  });
});

const passage = (passageId: number, documentId = 1) => ({ passageId, documentId, sectionId: null, titlePath: ['T'], text: `p${passageId}` });
const pair = (i: number): TrainingPair => ({
  kind: 'section-path',
  question: `question ${i}`,
  questionPassageId: null,
  positive: passage(i),
  positiveDocument: { documentId: 1, title: 'T' },
  negatives: { bm25: [passage(100 + i)], inDoc: [], inSec: [], documents: [{ documentId: 2, title: 'U' }] },
});

describe('the pairs file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dhr-pairs-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function read(lines: string[]): Promise<TrainingPair[]> {
    const file = join(dir, `pairs-${Math.random().toString(36).slice(2)}.jsonl`);
    await writeFile(file, lines.join('\n'));
    const out: TrainingPair[] = [];
    for await (const p of readPairs(file)) out.push(p);
    return out;
  }

  it('streams valid pairs and skips blank lines', async () => {
    const pairs = await read([JSON.stringify(pair(1)), '', JSON.stringify(pair(2))]);
    expect(pairs.map((p) => p.positive.passageId)).toEqual([1, 2]);
  });

  it.each([
    ['not JSON', '{"kind": ', /:2: not valid JSON/],
    ['an unknown kind', JSON.stringify({ ...pair(2), kind: 'guess' }), /:2: kind must be one of/],
    ['an empty question', JSON.stringify({ ...pair(2), question: ' ' }), /:2: question must be a non-empty string/],
    ['a bad positive id', JSON.stringify({ ...pair(2), positive: passage(0) }), /:2: positive\.passageId must be a positive whole number/],
    ['a bad negative', JSON.stringify({ ...pair(2), negatives: { ...pair(2).negatives, inSec: [{ passageId: 3 }] } }), /:2: negatives\.inSec\[0\]\.documentId/],
    ['no negatives', JSON.stringify({ ...pair(2), negatives: undefined }), /:2: negatives must be an object/],
  ])('refuses %s with a typed error naming the line', async (_, bad, message) => {
    const error = await read([JSON.stringify(pair(1)), bad as string, JSON.stringify(pair(3))]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairsFileError);
    expect((error as PairsFileError).line).toBe(2);
    expect((error as PairsFileError).code).toBe(ErrorCode.BAD_USER_INPUT);
    expect((error as Error).message).toMatch(message as RegExp);
  });

  it('names a missing file', async () => {
    const error = await (async () => {
      for await (const p of readPairs(join(dir, 'absent.jsonl'))) void p;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PairsFileError);
    expect((error as Error).message).toMatch(/absent\.jsonl:0: no such file/);
  });
});
