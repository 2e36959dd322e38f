import type { VectorSearch } from '../../src/retrieval/sql';

/**
 * A search that reads no vectors (the lexical modes): the model refs are never used. Defaults ask
 * for every item (k1 = k2 = 1000) so tests compare whole rankings.
 */
export const textSearch = (over: Partial<VectorSearch>): VectorSearch => ({
  mode: 'LEXICAL',
  documentModel: { id: 0, dimension: 1 },
  passageModel: { id: 0, dimension: 1 },
  k1: 1000,
  k2: 1000,
  lambda: 1,
  ...over,
});
