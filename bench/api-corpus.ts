/**
 * The synthetic title trees of `bench:api` and `bench:fairness`: documents of an abstract and 5
 * sections, words drawn from the tiny tokenizer's vocabulary, each document and part named by a
 * rare term (`item<d>`, `part<s>`) so a question can ask for exactly one.
 */
import { prng } from '../test/helpers/prng';
import { WORDS } from '../test/helpers/tiny-tokenizer';

export const TEXT_WORDS = WORDS.filter((w) => /^[a-z]+$/.test(w));

export function apiCorpus(documents: number, seed: number) {
  const rand = prng(seed);
  const words = (n: number) => Array.from({ length: n }, () => TEXT_WORDS[Math.floor(rand() * TEXT_WORDS.length)]).join(' ');
  return Array.from({ length: documents }, (_, d) => ({
    key: `bench/${d}`,
    title: `${words(3)} ${d}`,
    abstract: `${words(20)} item${d}.`,
    sections: Array.from({ length: 5 }, (_, s) => ({ title: words(2), text: `${words(40)} item${d} part${s}.` })),
  }));
}
