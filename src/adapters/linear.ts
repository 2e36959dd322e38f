import { DomainError, ErrorCode } from '../errors';

/** The two question vectors DHR encodes: for the document stage and for the passage stage. */
export const ADAPTER_LEVELS = ['document', 'passage'] as const;
export type AdapterLevel = (typeof ADAPTER_LEVELS)[number];

/**
 * A residual linear map on question vectors: q' = q + W q + b, rescaled to q's own norm.
 * W is d×d row-major. W = 0 and b = 0 is the identity, and then q' is q bit for bit (the
 * rescale factor is ‖q‖/‖q‖ = 1 exactly), so an untrained adapter changes no score.
 */
export interface LinearMap {
  readonly dim: number;
  readonly w: Float32Array;
  readonly b: Float32Array;
}

export function identityMap(dim: number): LinearMap {
  return { dim, w: new Float32Array(dim * dim), b: new Float32Array(dim) };
}

export function isIdentity(map: LinearMap): boolean {
  return map.w.every((x) => x === 0) && map.b.every((x) => x === 0);
}

/** Euclidean norm, in one place so the identity's rescale factor is exactly 1. */
export function norm(v: ArrayLike<number>, offset = 0, dim = v.length): number {
  let s = 0;
  for (let i = 0; i < dim; i++) s += v[offset + i] * v[offset + i];
  return Math.sqrt(s);
}

/** q' for one question vector; throws DIMENSION_MISMATCH when q is not the map's dimension. */
export function applyMap(map: LinearMap, q: Float32Array): Float32Array {
  const d = map.dim;
  if (q.length !== d) {
    throw new DomainError(ErrorCode.DIMENSION_MISMATCH, `the adapter maps ${d}-d question vectors, but this one is ${q.length}-d`);
  }
  const z = new Float64Array(d);
  for (let r = 0; r < d; r++) {
    let s = 0;
    const row = r * d;
    for (let c = 0; c < d; c++) s += map.w[row + c] * q[c];
    z[r] = q[r] + s + map.b[r];
  }
  const nz = norm(z);
  // Stored vectors are unit length and scores are inner products: keep the question's scale.
  const scale = nz === 0 ? 1 : norm(q) / nz;
  const out = new Float32Array(d);
  for (let r = 0; r < d; r++) out[r] = z[r] * scale;
  return out;
}

/** Weights as bytes: W then b, float32 little-endian (what the adapters table stores). */
export function encodeWeights(map: LinearMap): Uint8Array {
  const all = new Float32Array(map.dim * map.dim + map.dim);
  all.set(map.w, 0);
  all.set(map.b, map.dim * map.dim);
  const bytes = new Uint8Array(all.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < all.length; i++) view.setFloat32(i * 4, all[i], true);
  return bytes;
}

export function decodeWeights(bytes: Uint8Array, dim: number): LinearMap {
  const n = dim * dim + dim;
  if (bytes.byteLength !== n * 4) {
    throw new DomainError(ErrorCode.DIMENSION_MISMATCH, `adapter weights hold ${bytes.byteLength} bytes, but a ${dim}-d map needs ${n * 4}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const w = new Float32Array(dim * dim);
  const b = new Float32Array(dim);
  for (let i = 0; i < w.length; i++) w[i] = view.getFloat32(i * 4, true);
  for (let i = 0; i < dim; i++) b[i] = view.getFloat32((w.length + i) * 4, true);
  return { dim, w, b };
}

/** A trained adapter: a map per level it was trained for; a level without one passes through. */
export interface QueryAdapter {
  readonly name: string;
  readonly dim: number;
  readonly maps: Partial<Record<AdapterLevel, LinearMap>>;
}

/** Both question vectors through the adapter (a level it has no map for is returned as it was). */
export function adaptQuestion<T extends { document?: Float32Array; passage?: Float32Array }>(adapter: QueryAdapter, question: T): T {
  // A level the mode does not read may have no vector (a client's own vectors come per role).
  const document = adapter.maps.document && question.document ? applyMap(adapter.maps.document, question.document) : question.document;
  const passage = adapter.maps.passage && question.passage ? applyMap(adapter.maps.passage, question.passage) : question.passage;
  return { ...question, document, passage };
}
