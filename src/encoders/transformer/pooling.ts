/** From a model output tensor to one sentence vector per text. */
import type { Pooling } from './config';

/**
 * `data` is [B,S,H] token states (pooled: mean over the first lengths[b] positions — the unmasked
 * ones, as padding is on the right — or the CLS state at position 0) or [B,H] sentence embeddings
 * (copied as they are).
 */
export function sentenceVectors(data: Float32Array, dims: readonly number[], lengths: readonly number[], pooling: Pooling): Float32Array[] {
  if (dims.length === 2) {
    const H = dims[1]!;
    return lengths.map((_, b) => data.slice(b * H, (b + 1) * H));
  }
  const [, S, H] = dims as [number, number, number];
  return lengths.map((length, b) => {
    const base = b * S * H;
    if (pooling === 'cls') return data.slice(base, base + H);
    // Sum in float64 so long sequences do not lose precision before the division.
    const sum = new Float64Array(H);
    for (let p = 0; p < length; p++) {
      const at = base + p * H;
      for (let h = 0; h < H; h++) sum[h] += data[at + h];
    }
    return Float32Array.from(sum, (v) => v / Math.max(length, 1));
  });
}

/** Scales to unit length in place (a zero vector stays zero). */
export function l2Normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}
