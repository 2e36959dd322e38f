/**
 * Answer highlights (DensePhrases' phrase-level answers, row by row): the sentence of a passage
 * most likely to answer the question, and inside it the shortest span that carries the answer
 * where one stands out (the value after a label: "name: Oslo"). Pure: sentence similarities from
 * an encoder come in as numbers (highlight.ts computes them), so this is testable by hand.
 */

/** A piece of the passage text; start/end are JavaScript string offsets (UTF-16), end exclusive. */
export interface TextSpan {
  text: string;
  start: number;
  end: number;
}

export interface Answer extends TextSpan {
  /** The answer sentence's score: the encoder similarity and the lexical overlap, blended. */
  score: number;
  /** The whole sentence the answer span lies in (equal to the span when no shorter span stands out). */
  sentence: TextSpan;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * A sentence end the segmenter misses: ICU does not break before a lower-case word, but
 * label–value text ("name: Oslo. geographic coordinates: 59 55 N.") starts each sentence with one.
 * Splits after . ! ? where a short label and a colon follow.
 */
const LABEL_START = /(?<=[.!?])\s+(?=[^\s:.;][^:.;]{0,40}:\s)/gu;

/** Sentences (Intl.Segmenter, then label starts), trimmed, with their offsets in `text`; blank ones dropped. */
export function splitSentences(text: string): TextSpan[] {
  const out: TextSpan[] = [];
  const push = (piece: string, at: number) => {
    const lead = piece.length - piece.trimStart().length;
    const body = piece.trim();
    if (body) out.push({ text: body, start: at + lead, end: at + lead + body.length });
  };
  for (const { segment, index } of segmenter.segment(text)) {
    let from = 0;
    for (const m of segment.matchAll(LABEL_START)) {
      if (m[0] === '' || segment.slice(m.index! + m[0].length).split(':')[0].trim().split(/\s+/).length > 5) continue;
      push(segment.slice(from, m.index), index + from);
      from = m.index! + m[0].length;
    }
    push(segment.slice(from), index + from);
  }
  return out;
}

// A short English stop list: question words and function words carry no answer. Hand-written
// because the BM25 side uses PostgreSQL's analyser, which this pure, database-free module cannot call.
const STOP = new Set(
  ('a an and are as at be by did do does for from has have how in is it its of on or the to was were what when where which who whom whose why ' +
    'with this that these those there their them they he she his her i me my we our you your not no can could would should will shall may').split(' '),
);

/** A crude stemmer (plural and common verb endings) so "capitals" meets "capital". */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Lower-cased, stemmed content words. */
export function contentTerms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP.has(w)).map(stem);
}

/** Share of the question's distinct content terms that the sentence contains (0–1). */
export function lexicalOverlap(question: ReadonlySet<string>, sentence: string): number {
  if (question.size === 0) return 0;
  const words = new Set(contentTerms(sentence));
  let hits = 0;
  for (const term of question) if (words.has(term)) hits++;
  return hits / question.size;
}

/** "label: value" pairs of a sentence ("name: Oslo.", "total: 385,207 sq km; land: …"). */
const PAIR = /(^|;\s*)([^:;.]{1,40}?):\s+([^;]+?)(?=\s*;|\s*[.!?]?$)/gu;

/**
 * The value after a label, where one stands out: the pair whose label shares the most words with
 * the question, or the only pair of a sentence; null when a sentence has several pairs and none
 * is named by the question, or when it is not label–value text at all.
 */
export function labelValueSpan(sentence: TextSpan, question: ReadonlySet<string>): TextSpan | null {
  const pairs: { label: string; value: TextSpan }[] = [];
  for (const m of sentence.text.matchAll(PAIR)) {
    const label = m[2].trim();
    // A label is a short phrase, not a clause that happens to precede a colon.
    if (label.split(/\s+/).length > 5) continue;
    const valueStart = m.index! + m[0].length - m[3].length;
    pairs.push({ label, value: { text: m[3], start: sentence.start + valueStart, end: sentence.start + valueStart + m[3].length } });
  }
  if (pairs.length === 0) return null;
  if (pairs.length === 1) return pairs[0].value;
  let best: { value: TextSpan; hits: number } | null = null;
  for (const pair of pairs) {
    const hits = lexicalOverlap(question, pair.label);
    if (hits > 0 && (!best || hits > best.hits)) best = { value: pair.value, hits };
  }
  return best?.value ?? null;
}

/** Weight of the encoder similarity against the lexical overlap when both are known. */
export const DENSE_WEIGHT = 0.6;
/** Earlier sentences win ties: passages tend to state their point first. */
const POSITION_PENALTY = 0.001;

/**
 * Picks the answer in one passage. `similarities[i]` is the encoder's question–sentence inner
 * product for sentence i of splitSentences(text); without them the overlap alone decides.
 */
export function pickAnswer(question: string, text: string, similarities?: readonly number[]): Answer | null {
  const sentences = splitSentences(text);
  if (sentences.length === 0) return null;
  const terms = new Set(contentTerms(question));
  let best = { sentence: sentences[0], score: -Infinity, ranked: -Infinity };
  sentences.forEach((sentence, i) => {
    const lexical = lexicalOverlap(terms, sentence.text);
    const dense = similarities?.[i];
    const score = dense === undefined ? lexical : DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * lexical;
    const ranked = score - i * POSITION_PENALTY;
    if (ranked > best.ranked) best = { sentence, score, ranked };
  });
  const { sentence, score } = best;
  const span = labelValueSpan(sentence, terms) ?? sentence;
  return { ...span, score, sentence };
}
