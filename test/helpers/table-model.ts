import type { Encoder } from '../../src/encoders/types';
import { prng } from './prng';
import { syntheticModel } from './synthetic-model';

/**
 * A synthetic model that can encode questions: a text in `table` gets that vector, any other a
 * unit vector seeded by the text, so the same question always gets the same vector. Stored
 * vectors are inserted by the test, as with syntheticModel (same name, same registry row).
 */
export function tableModel(name: string, dimension: number, table = new Map<string, Float32Array>()): Encoder & { table: Map<string, Float32Array> } {
  const vectorOf = (text: string): Float32Array => {
    const known = table.get(text);
    if (known) return known;
    let seed = 7;
    for (const ch of text) seed = (Math.imul(seed, 31) + ch.charCodeAt(0)) >>> 0;
    const rand = prng(seed);
    const v = Float32Array.from({ length: dimension }, () => rand() - 0.5);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  };
  return {
    ...syntheticModel(name, dimension),
    table,
    encode: async (texts) => ({
      vectors: texts.map(vectorOf),
      stats: { texts: texts.length, tokens: texts.length, truncated: 0 },
    }),
  };
}
