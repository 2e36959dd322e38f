/**
 * Seeded randomness for sampling negatives and title-tree positives. Each pair gets its own
 * generator from (seed, pair key), so what a pair draws does not depend on which pairs came
 * before it: the first N lines of a run are the same whatever its limit, and the GraphQL query
 * agrees with the CLI.
 */

import { seeded as mulberry32 } from '../adapters/random';

export { mulberry32 };

/** FNV-1a over the key's text: a 32-bit seed per (run seed, pair). */
export function pairRandom(seed: number, ...key: (string | number | null)[]): () => number {
  let h = 0x811c9dc5;
  for (const ch of `${seed}|${key.join('|')}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193);
  }
  return mulberry32(h >>> 0);
}

/** Up to `n` items drawn without replacement, in draw order (partial Fisher–Yates on a copy). */
export function sample<T>(items: readonly T[], n: number, random: () => number): T[] {
  const pool = [...items];
  const count = Math.min(n, pool.length);
  for (let i = 0; i < count; i += 1) {
    const j = i + Math.floor(random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, count);
}
