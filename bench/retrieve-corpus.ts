/**
 * The synthetic corpus of `npm run bench:retrieve`: unit vectors with real hierarchical structure,
 * reproducible from a seed (mulberry32, src/testing/prng.ts; normals by Box–Muller).
 *
 *   - `clusters` cluster centres: uniform random directions on the unit sphere (dimension `dimension`).
 *   - documents: each picks a centre uniformly at random; its vector is unit(centre + s_D·z/√dim),
 *     z standard normal per component, so ‖noise‖ ≈ s_D and cos(document, centre) ≈ 1/√(1+s_D²).
 *   - passages: `passagesPerDocument` per document, unit(document + s_P·z/√dim).
 *   - questions: a passage chosen uniformly at random (the right answer exists), then
 *     unit(passage + s_Q·z/√dim); the same vector is used against documents and against passages.
 *
 * With the defaults (s_D = 1.0, s_P = 0.7, s_Q = 0.7): cos(document, centre) ≈ 0.71,
 * cos(passage, its document) ≈ 0.82, cos(question, its passage) ≈ 0.82, and two passages of one
 * document ≈ 0.67. Vectors are drawn in one sequential stream: centres, document vectors, then
 * passages document by document (so they can be streamed into the database without being held).
 * Questions come from a second stream (seed + 1). Ids are dense: document i (1-based) owns
 * passages (i-1)·P+1 … i·P.
 */
import { prng } from '../test/helpers/prng';

export interface CorpusSpec {
  seed: number;
  documents: number;
  passagesPerDocument: number;
  dimension: number;
  clusters: number;
  documentSpread: number;
  passageSpread: number;
  questionSpread: number;
  questions: number;
}

export const TIERS: Record<string, { documents: number; passagesPerDocument: number }> = {
  '10k': { documents: 1_000, passagesPerDocument: 10 },
  '100k': { documents: 10_000, passagesPerDocument: 10 },
  // 250k and 2.5m: one shard's part of 1M and of 10M on 4 shards (bench:citus's projection).
  '250k': { documents: 25_000, passagesPerDocument: 10 },
  '1m': { documents: 100_000, passagesPerDocument: 10 },
  '2.5m': { documents: 250_000, passagesPerDocument: 10 },
};

export function tierSpec(tier: string, seed = 20240611, questions = 200): CorpusSpec {
  const t = TIERS[tier];
  if (!t) throw new Error(`unknown BENCH_TIER "${tier}" (one of ${Object.keys(TIERS).join(', ')})`);
  return {
    seed,
    ...t,
    dimension: 512,
    clusters: 256,
    documentSpread: 1.0,
    passageSpread: 0.7,
    questionSpread: 0.7,
    questions,
  };
}

/** Standard normals from a uniform stream (Box–Muller, both values used). */
function normals(rand: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = rand();
    while (u === 0) u = rand();
    const r = Math.sqrt(-2 * Math.log(u));
    const t = 2 * Math.PI * rand();
    spare = r * Math.sin(t);
    return r * Math.cos(t);
  };
}

/** Writes unit(center + spread·z/√dim) into out[offset … offset+dim). */
function nearInto(out: Float32Array, offset: number, center: ArrayLike<number>, centerOffset: number, dim: number, spread: number, z: () => number): void {
  const scale = spread / Math.sqrt(dim);
  let norm = 0;
  for (let i = 0; i < dim; i++) {
    const x = center[centerOffset + i] + scale * z();
    out[offset + i] = x;
    norm += x * x;
  }
  const inv = 1 / Math.sqrt(norm);
  for (let i = 0; i < dim; i++) out[offset + i] *= inv;
}

export class Corpus {
  readonly documentVectors: Float32Array;
  private readonly z: () => number;
  private nextDocument = 0;

  constructor(readonly spec: CorpusSpec) {
    const { dimension: dim, clusters, documents } = spec;
    this.z = normals(prng(spec.seed));
    const centres = new Float32Array(clusters * dim);
    const zero = new Float32Array(dim);
    for (let c = 0; c < clusters; c++) nearInto(centres, c * dim, zero, 0, dim, 1, this.z);
    const rand = prng(spec.seed ^ 0x2545f491);
    this.documentVectors = new Float32Array(documents * dim);
    for (let d = 0; d < documents; d++) {
      const c = Math.floor(rand() * clusters);
      nearInto(this.documentVectors, d * dim, centres, c * dim, dim, spec.documentSpread, this.z);
    }
  }

  get passages(): number {
    return this.spec.documents * this.spec.passagesPerDocument;
  }

  /**
   * The passage vectors of the next `count` documents (in id order), `passagesPerDocument` each;
   * must be called in order from the first document.
   */
  nextPassages(count: number): { firstPassageId: number; vectors: Float32Array; rows: number } {
    const { dimension: dim, passagesPerDocument: per } = this.spec;
    const n = Math.min(count, this.spec.documents - this.nextDocument);
    const vectors = new Float32Array(n * per * dim);
    for (let d = 0; d < n; d++) {
      const doc = this.nextDocument + d;
      for (let p = 0; p < per; p++) {
        nearInto(vectors, (d * per + p) * dim, this.documentVectors, doc * dim, dim, this.spec.passageSpread, this.z);
      }
    }
    const firstPassageId = this.nextDocument * per + 1;
    this.nextDocument += n;
    return { firstPassageId, vectors, rows: n * per };
  }
}

/** Which passage (id) each question is drawn near: a stream of its own, independent of the vectors. */
export function questionTargets(spec: CorpusSpec): number[] {
  const rand = prng(spec.seed + 1);
  const total = spec.documents * spec.passagesPerDocument;
  return Array.from({ length: spec.questions }, () => 1 + Math.floor(rand() * total));
}

/** Question vectors near their target passages' (stored) vectors, in question order. */
export function questionVectors(spec: CorpusSpec, targetVectors: Float32Array[]): Float32Array[] {
  const z = normals(prng(spec.seed + 2));
  return targetVectors.map((v) => {
    const out = new Float32Array(spec.dimension);
    nearInto(out, 0, v, 0, spec.dimension, spec.questionSpread, z);
    return out;
  });
}

/**
 * A PostgreSQL binary `vector[]` value (array_recv + pgvector's vector_recv): every field is a
 * 32-bit big-endian word, so it is built natively and byte-swapped once.
 * vectors holds `rows` vectors of `dim` floats back to back.
 */
export function binaryVectorArray(vectorOid: number, vectors: Float32Array, rows: number, dim: number): Buffer {
  const words = 5 + rows * (2 + dim);
  const u32 = new Uint32Array(words);
  const f32 = new Float32Array(u32.buffer);
  u32[0] = 1; // ndim
  u32[1] = 0; // no nulls
  u32[2] = vectorOid;
  u32[3] = rows;
  u32[4] = 1; // lower bound
  let w = 5;
  for (let r = 0; r < rows; r++) {
    u32[w++] = 4 + 4 * dim; // element length in bytes
    u32[w++] = (dim << 16) >>> 0; // int16 dim, int16 unused (0)
    f32.set(vectors.subarray(r * dim, (r + 1) * dim), w);
    w += dim;
  }
  return Buffer.from(u32.buffer).swap32();
}
