import type { TrainingData } from '../../src/adapters/train';
import { prng } from './prng';

/**
 * Synthetic training data with a known answer: unit target vectors, and questions made from their
 * positives by the inverse of a known map M = I + W*, so the adapter that maps questions back onto
 * their positives is W*. Hard negatives are targets near the positive.
 */
export interface SyntheticAdapterData {
  data: TrainingData;
  /** The map that undoes the distortion (row-major d×d). */
  wStar: Float64Array;
}

function gaussian(rand: () => number): number {
  // Box–Muller: a real normal, so random directions are uniform.
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

function normalizeInto(v: Float64Array, out: Float32Array, offset: number): void {
  let s = 0;
  for (const x of v) s += x * x;
  const n = Math.sqrt(s);
  for (let i = 0; i < v.length; i++) out[offset + i] = v[i] / n;
}

/** Solves (I + W*) x = p for x by Gaussian elimination with partial pivoting (small d in tests, 512 in the bench). */
function inverse(m: Float64Array, d: number): Float64Array {
  const a = Float64Array.from(m);
  const inv = new Float64Array(d * d);
  for (let i = 0; i < d; i++) inv[i * d + i] = 1;
  for (let col = 0; col < d; col++) {
    let pivot = col;
    for (let r = col + 1; r < d; r++) if (Math.abs(a[r * d + col]) > Math.abs(a[pivot * d + col])) pivot = r;
    for (let c = 0; c < d; c++) {
      [a[col * d + c], a[pivot * d + c]] = [a[pivot * d + c], a[col * d + c]];
      [inv[col * d + c], inv[pivot * d + c]] = [inv[pivot * d + c], inv[col * d + c]];
    }
    const p = a[col * d + col];
    for (let c = 0; c < d; c++) {
      a[col * d + c] /= p;
      inv[col * d + c] /= p;
    }
    for (let r = 0; r < d; r++) {
      if (r === col) continue;
      const f = a[r * d + col];
      if (f === 0) continue;
      for (let c = 0; c < d; c++) {
        a[r * d + c] -= f * a[col * d + c];
        inv[r * d + c] -= f * inv[col * d + c];
      }
    }
  }
  return inv;
}

export function syntheticAdapterData(options: {
  pairs: number;
  targets: number;
  dim: number;
  /** Size of W*'s entries relative to 1/√d. */
  distortion?: number;
  negativesPerPair?: number;
  noise?: number;
  seed?: number;
  clusterSize?: number;
  clusterSpread?: number;
  /** W*'s rank (default: full). */
  rank?: number;
}): SyntheticAdapterData {
  const { pairs: n, targets: m, dim: d } = options;
  const rand = prng(options.seed ?? 1);
  const k = options.negativesPerPair ?? 3;
  const spread = (options.distortion ?? 1) / Math.sqrt(d);
  const wStar = new Float64Array(d * d);
  if (options.rank) {
    // W* = A Bᵀ of the given rank, entries of about the same size as the full-rank case.
    const r = options.rank;
    const a = Float64Array.from({ length: d * r }, () => gaussian(rand));
    const b = Float64Array.from({ length: d * r }, () => gaussian(rand));
    for (let x = 0; x < d; x++)
      for (let c = 0; c < d; c++) for (let k = 0; k < r; k++) wStar[x * d + c] += (spread * a[x * r + k] * b[c * r + k]) / Math.sqrt(r);
  } else {
    for (let i = 0; i < wStar.length; i++) wStar[i] = spread * gaussian(rand);
  }
  const mStar = Float64Array.from(wStar);
  for (let i = 0; i < d; i++) mStar[i * d + i] += 1;
  const mInv = inverse(mStar, d);

  // Targets in clusters of `clusterSize` around random centres: hard negatives come from the
  // positive's cluster, so ranking them needs the map to be precise, not just roughly right.
  const size = options.clusterSize ?? 10;
  const tightness = options.clusterSpread ?? 0.3;
  const targets = new Float32Array(m * d);
  const v = new Float64Array(d);
  const centre = new Float64Array(d);
  for (let t = 0; t < m; t++) {
    if (t % size === 0) for (let i = 0; i < d; i++) centre[i] = gaussian(rand) / Math.sqrt(d);
    for (let i = 0; i < d; i++) v[i] = centre[i] + (tightness * gaussian(rand)) / Math.sqrt(d);
    normalizeInto(v, targets, t * d);
  }
  const questions = new Float32Array(n * d);
  const positives = new Int32Array(n);
  const negatives = new Int32Array(n * k).fill(-1);
  const noise = options.noise ?? 0;
  for (let p = 0; p < n; p++) {
    const t = Math.floor(rand() * m);
    positives[p] = t;
    for (let r = 0; r < d; r++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += mInv[r * d + c] * targets[t * d + c];
      v[r] = s + noise * gaussian(rand);
    }
    normalizeInto(v, questions, p * d);
    const first = t - (t % size);
    const members = Math.min(size, m - first);
    for (let h = 0; h < k && members > 1; h++) negatives[p * k + h] = first + ((t - first + 1 + Math.floor(rand() * (members - 1))) % members);
  }
  return { data: { dim: d, questions, positives, negatives, negativesPerPair: k, targets }, wStar };
}

/** min over c of ‖c(I + W) − (I + W*)‖ / ‖I + W*‖: the learned map up to the scale the rescale ignores. */
export function relativeMapError(w: ArrayLike<number>, wStar: ArrayLike<number>, d: number): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let r = 0; r < d; r++) {
    for (let c = 0; c < d; c++) {
      const a = w[r * d + c] + (r === c ? 1 : 0);
      const b = wStar[r * d + c] + (r === c ? 1 : 0);
      ab += a * b;
      aa += a * a;
      bb += b * b;
    }
  }
  const scale = ab / aa;
  return Math.sqrt(Math.max(0, bb - 2 * scale * ab + scale * scale * aa)) / Math.sqrt(bb);
}
