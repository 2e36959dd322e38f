import { isExternal } from '../../encoders/external';
import type { Encoder } from '../../encoders/types';

/** Counts the tokens of a block's text, and says whose count it is. */
export interface ContextTokenizer {
  readonly name: string;
  count(text: string): number;
}

/** Where no tokenizer is reachable: OpenAI's rule of thumb for English text, one token per 4 characters. */
export const APPROXIMATE_TOKENIZER: ContextTokenizer = {
  name: 'approximate: 1 token per 4 characters',
  count: (text) => Math.ceil(text.length / 4),
};

/**
 * The active passage encoder's tokenizer, without what it adds to every text (a role prefix,
 * special tokens), measured once as the count of the empty text. An external model has no
 * tokenizer (it counts words): the approximation instead.
 */
export function contextTokenizer(encoder: Encoder | undefined): ContextTokenizer {
  if (!encoder || isExternal(encoder)) return APPROXIMATE_TOKENIZER;
  const overhead = encoder.countTokens('', 'passage');
  return { name: encoder.name, count: (text) => Math.max(0, encoder.countTokens(text, 'passage') - overhead) };
}
