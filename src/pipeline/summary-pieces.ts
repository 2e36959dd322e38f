import type { Encoder } from '../encoders/types';

/**
 * Several summary vectors: a summary longer than the document encoder's token budget
 * is clipped in DHR's one summary vector, so the end of a long table of contents never reaches it.
 * Its pieces are embedded too, and HYBRID_HIERARCHICAL can score a document by the best of them
 * (max-sim). Greedy word packing: each piece is "title, words…" and fits the budget; a single word
 * too long to fit is a piece of its own (the encoder clips it). A summary that fits has no pieces:
 * its one vector already sees all of it.
 */
export function summaryPieces(encoder: Encoder, title: string, summary: string): string[] {
  const budget = encoder.maxTokens('document');
  if (encoder.countTokens(summary, 'document') <= budget) return [];
  const rest = summary.startsWith(title) ? summary.slice(title.length).replace(/^,\s*/, '') : summary;
  const pieces: string[] = [];
  let words: string[] = [];
  for (const word of rest.split(/\s+/).filter(Boolean)) {
    if (words.length > 0 && encoder.countTokens(`${title}, ${[...words, word].join(' ')}`, 'document') > budget) {
      pieces.push(`${title}, ${words.join(' ')}`);
      words = [];
    }
    words.push(word);
  }
  if (words.length > 0) pieces.push(`${title}, ${words.join(' ')}`);
  return pieces;
}
