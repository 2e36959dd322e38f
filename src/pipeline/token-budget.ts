import type { Encoder } from '../encoders/types';
import type { TokenBudget } from '../ingest/types';

/**
 * The passage encoder's token budget for ingest's splitter, so passages fit what the encoder reads
 * (USE-lite reads 128 tokens: unsplit, 83% of the Python docs' passages were clipped). The id
 * names model, weights and budget, so the content hash changes, and a re-ingest re-splits, when
 * any of them does.
 */
export function passageTokenBudget(encoder: Encoder): TokenBudget {
  const maxTokens = encoder.maxTokens('passage');
  return {
    id: `${encoder.name}:${encoder.checksum.slice(0, 16)}:${maxTokens}`,
    maxTokens,
    count: (text) => encoder.countTokens(text, 'passage'),
  };
}
