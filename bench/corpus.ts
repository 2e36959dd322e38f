import type { DocumentInput } from '../src/ingest/types';
import { prng } from '../test/helpers/prng';

const VOCABULARY = (
  'the of and in to a is was for on as by with from at that which river city state population history ' +
  'economy government capital language culture century war trade north south east west mountain coast ' +
  'island region people religion law court parliament president minister election industry farming ' +
  'export import energy oil gas coal railway road port airport school university music art science'
).split(' ');

function sentence(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(VOCABULARY[Math.floor(rand() * VOCABULARY.length)]);
  out[0] = out[0][0].toUpperCase() + out[0].slice(1);
  return `${out.join(' ')}.`;
}

function text(rand: () => number, minWords: number, maxWords: number): string {
  const target = minWords + Math.floor(rand() * (maxWords - minWords + 1));
  const parts: string[] = [];
  let n = 0;
  while (n < target) {
    const len = Math.min(target - n, 8 + Math.floor(rand() * 12));
    parts.push(sentence(rand, len));
    n += len;
  }
  return parts.join(' ');
}

/**
 * A corpus with real title trees: an abstract, 3 sections each with its own text and 2
 * subsections; every text 60–95 words, so each is one passage (10 passages a document).
 */
export function generateCorpus(documents: number, seed = 42): DocumentInput[] {
  const rand = prng(seed);
  return Array.from({ length: documents }, (_, i) => ({
    key: `bench/${i}`,
    title: `Document ${i}`,
    source: 'bench',
    abstract: text(rand, 60, 95),
    sections: [0, 1, 2].map((s) => ({
      title: `Section ${s}`,
      text: text(rand, 60, 95),
      sections: [0, 1].map((c) => ({ title: `Subsection ${s}.${c}`, text: text(rand, 60, 95) })),
    })),
  }));
}
