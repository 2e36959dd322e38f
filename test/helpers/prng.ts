import { seeded } from '../../src/adapters/random';

/** mulberry32 (src/adapters/random.ts): generated corpora, weights and property loops are reproducible. */
export const prng = seeded;
