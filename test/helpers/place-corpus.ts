import { prng } from './prng';

const WORDS = ['river', 'capital', 'bridge', 'museum', 'harbour', 'mountain', 'castle', 'railway', 'festival', 'island', 'forest', 'market', 'the', 'of'];

/**
 * Seeded documents of a small vocabulary (stop words included, headings that repeat), for the
 * BM25 rebuild tests: every lexeme occurs in many passages, so postings and statistics are shared.
 */
export function placeCorpus(seed: number, documents: number, prefix = 'd') {
  const rand = prng(seed);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
  const sentence = (n: number) => Array.from({ length: n }, pick).join(' ') + '.';
  return Array.from({ length: documents }, (_, i) => ({
    key: `${prefix}${i}`,
    title: `Place ${i} ${pick()}`,
    abstract: sentence(2 + Math.floor(rand() * 6)),
    sections: Array.from({ length: 1 + (i % 3) }, (_, s) => ({
      title: s % 2 === 0 ? pick() : 'Details',
      text: Array.from({ length: 1 + Math.floor(rand() * 4) }, () => sentence(2 + Math.floor(rand() * 12))).join(' '),
    })),
  }));
}
