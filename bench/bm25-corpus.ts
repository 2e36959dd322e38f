/**
 * The synthetic text corpus of `npm run bench:bm25`, reproducible from a seed (mulberry32,
 * src/testing/prng.ts).
 *
 *   - Vocabulary: `vocabulary` distinct made-up words (2–4 consonant–vowel syllables and a final
 *     consonant, never ending in s, e, y, "ed" or "ing", so English stemming leaves nearly all of
 *     them alone and two of them rarely share a stem), ranked 1…V.
 *   - Tokens: a word of rank r with probability ∝ 1 / (r + q)^s (Zipf–Mandelbrot, s = 1.0,
 *     q = 2.7, the usual fit for English), a stop word (no lexeme: counts for nothing in BM25)
 *     with probability `stopShare`, and one of the document's `topicWords` (drawn once per
 *     document from ranks 100…V) with probability `topicShare`, so documents have subjects and
 *     term frequencies above 1, as real text does.
 *   - Documents: a title of 3–7 words, an abstract of 25–50 words, `sections` section titles of
 *     1–3 words; summary as the product builds it (src/ingest/summary.ts: "title, abstract, toc").
 *   - Passages: `passagesPerDocument` per document, 30–90 words; the first two belong to the
 *     abstract (title path [title]), the others to the sections in turn ([title, section]).
 *   - Questions (a second stream, seed + 1): a passage chosen uniformly at random, then 3–8 of its
 *     distinct content words, each slot taken from the passage's rarer or its more common half
 *     (by rank) at random, so questions mix rare and common terms and always have an answer.
 *
 * Ids are dense: document i (1-based) owns passages (i−1)·P+1 … i·P.
 */
import { prng } from '../test/helpers/prng';

export interface TextCorpusSpec {
  seed: number;
  documents: number;
  passagesPerDocument: number;
  vocabulary: number;
  zipfS: number;
  zipfQ: number;
  stopShare: number;
  topicShare: number;
  topicWords: number;
  sections: number;
  minWords: number;
  maxWords: number;
}

export const TEXT_TIERS: Record<string, { documents: number; passagesPerDocument: number }> = {
  '10k': { documents: 1_000, passagesPerDocument: 10 },
  '100k': { documents: 10_000, passagesPerDocument: 10 },
  '1m': { documents: 100_000, passagesPerDocument: 10 },
};

export function textTierSpec(tier: string, seed = 20240611): TextCorpusSpec {
  const t = TEXT_TIERS[tier];
  if (!t) throw new Error(`unknown BENCH_TIER "${tier}" (one of ${Object.keys(TEXT_TIERS).join(', ')})`);
  return {
    seed,
    ...t,
    vocabulary: 60_000,
    zipfS: 1.0,
    zipfQ: 2.7,
    stopShare: 0.3,
    topicShare: 0.08,
    topicWords: 8,
    sections: 4,
    minWords: 30,
    maxWords: 90,
  };
}

/** English stop words: to_tsvector('english') gives them no lexeme. */
export const STOP_WORDS = [
  'the',
  'of',
  'and',
  'a',
  'to',
  'in',
  'is',
  'that',
  'for',
  'it',
  'as',
  'was',
  'with',
  'on',
  'by',
  'at',
  'from',
  'this',
  'be',
  'are',
  'or',
  'an',
  'which',
  'not',
  'but',
  'have',
  'its',
  'were',
  'their',
  'been',
];

const ONSETS = [
  'b',
  'c',
  'd',
  'f',
  'g',
  'h',
  'j',
  'k',
  'l',
  'm',
  'n',
  'p',
  'r',
  't',
  'v',
  'w',
  'z',
  'br',
  'cr',
  'dr',
  'gr',
  'pl',
  'st',
  'tr',
  'ch',
  'sh',
  'th',
];
const VOWELS = ['a', 'i', 'o', 'u', 'ai', 'ou', 'ea', 'io'];
const CODAS = ['k', 'm', 'n', 'r', 't', 'v', 'x', 'p', 'l', 'nd', 'rk', 'nt', 'lt'];

/** V distinct words, rank order (rank 1 first); the shortest words tend to be the most frequent. */
export function makeVocabulary(v: number, seed: number): string[] {
  const rand = prng(seed ^ 0x5eed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const seen = new Set<string>(STOP_WORDS);
  const words: string[] = [];
  while (words.length < v) {
    // 2 syllables for the first ~2k ranks, then up to 3 and 4, as frequent words are short
    const syllables = words.length < 2_000 ? 2 : words.length < 20_000 ? 2 + Math.floor(rand() * 2) : 2 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < syllables; i++) w += pick(ONSETS) + pick(VOWELS);
    w += pick(CODAS);
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
}

/** Cumulative Zipf–Mandelbrot weights over ranks 1…V (index r−1), normalized to 1. */
function zipfCdf(v: number, s: number, q: number): Float64Array {
  const cdf = new Float64Array(v);
  let total = 0;
  for (let r = 1; r <= v; r++) cdf[r - 1] = total += 1 / Math.pow(r + q, s);
  for (let i = 0; i < v; i++) cdf[i] /= total;
  return cdf;
}

function sampleRank(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo; // 0-based rank
}

export interface DocumentBatch {
  firstDocumentId: number;
  ids: number[];
  keys: string[];
  titles: string[];
  abstracts: string[];
  summaries: string[];
  /** per passage, in id order */
  passageIds: number[];
  passageDocumentIds: number[];
  ordinals: number[];
  texts: string[];
  /** '' for passages of the abstract */
  sectionTitles: string[];
  wordCounts: number[];
}

/** The corpus as one sequential stream of documents (and their passages), batch by batch. */
export class TextCorpus {
  readonly words: string[];
  private readonly cdf: Float64Array;
  private readonly rand: () => number;
  private next = 1;

  /** streamSeed: other documents over the same vocabulary (bench:ingest's BENCH_INTO adds them to a loaded store). */
  constructor(
    readonly spec: TextCorpusSpec,
    streamSeed = spec.seed,
  ) {
    this.words = makeVocabulary(spec.vocabulary, spec.seed);
    this.cdf = zipfCdf(spec.vocabulary, spec.zipfS, spec.zipfQ);
    this.rand = prng(streamSeed);
  }

  private text(n: number, topics: number[], stopWords: boolean): string {
    const out: string[] = [];
    const { stopShare, topicShare } = this.spec;
    for (let i = 0; i < n; i++) {
      const u = this.rand();
      if (stopWords && u < stopShare) out.push(STOP_WORDS[Math.floor(this.rand() * STOP_WORDS.length)]);
      else if (u < stopShare + topicShare) out.push(this.words[topics[Math.floor(this.rand() * topics.length)]]);
      else out.push(this.words[sampleRank(this.cdf, this.rand())]);
    }
    return out.join(' ');
  }

  private between(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }

  nextDocuments(count: number): DocumentBatch {
    const { passagesPerDocument: per, topicWords, vocabulary, sections, minWords, maxWords } = this.spec;
    const b: DocumentBatch = {
      firstDocumentId: this.next,
      ids: [],
      keys: [],
      titles: [],
      abstracts: [],
      summaries: [],
      passageIds: [],
      passageDocumentIds: [],
      ordinals: [],
      texts: [],
      sectionTitles: [],
      wordCounts: [],
    };
    for (let k = 0; k < count && this.next <= this.spec.documents; k++, this.next++) {
      const id = this.next;
      const topics = Array.from({ length: topicWords }, () => 100 + Math.floor(this.rand() * (vocabulary - 100)));
      const title = this.text(this.between(3, 7), topics, false);
      const abstract = this.text(this.between(25, 50), topics, true);
      const sectionTitles = Array.from({ length: sections }, () => this.text(this.between(1, 3), topics, false));
      b.ids.push(id);
      b.keys.push(`bench/${id}`);
      b.titles.push(title);
      b.abstracts.push(abstract);
      b.summaries.push([title, abstract, sectionTitles.join(', ')].join(', ')); // documentSummary's form
      for (let o = 0; o < per; o++) {
        const words = this.between(minWords, maxWords);
        b.passageIds.push((id - 1) * per + o + 1);
        b.passageDocumentIds.push(id);
        b.ordinals.push(o);
        b.texts.push(this.text(words, topics, true));
        b.sectionTitles.push(o < 2 ? '' : sectionTitles[Math.min(sections - 1, Math.floor(((o - 2) * sections) / Math.max(1, per - 2)))]);
        b.wordCounts.push(words);
      }
    }
    return b;
  }
}

/** The passages the questions are drawn from (uniform over all passages; stream seed + 1). */
export function questionPassages(spec: TextCorpusSpec, questions: number): number[] {
  const rand = prng(spec.seed + 1);
  const total = spec.documents * spec.passagesPerDocument;
  return Array.from({ length: questions }, () => 1 + Math.floor(rand() * total));
}

/**
 * 3–8 distinct content words of each passage text, mixing its rarer and its more common half;
 * `rankOf` maps a word to its rank (0-based). Stream seed + 2.
 */
export function questionsFrom(spec: TextCorpusSpec, texts: string[], rankOf: Map<string, number>): string[] {
  const rand = prng(spec.seed + 2);
  return texts.map((text) => {
    const distinct = [...new Set(text.split(/\s+/).filter((w) => rankOf.has(w)))].sort((a, b) => rankOf.get(a)! - rankOf.get(b)!);
    const n = Math.min(distinct.length, 3 + Math.floor(rand() * 6));
    const half = Math.ceil(distinct.length / 2);
    const common = distinct.slice(0, half);
    const rare = distinct.slice(half);
    const chosen: string[] = [];
    while (chosen.length < n) {
      const pool = (rand() < 0.5 && rare.length > 0) || common.length === 0 ? rare : common;
      chosen.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
    }
    // the question's words in a random order
    for (let i = chosen.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [chosen[i], chosen[j]] = [chosen[j], chosen[i]];
    }
    return chosen.join(' ');
  });
}
