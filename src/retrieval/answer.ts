/**
 * Answer highlights (DensePhrases' phrase-level answers, row by row): the sentence of a passage
 * most likely to answer the question, and inside it the shortest span that carries the answer
 * where one stands out (the value after a label: "name: Oslo"; a date for a "when" question, a
 * number with its unit for "how many", a name for "who", a place for "where"). Pure:
 * sentence similarities from an encoder come in as numbers (highlight.ts computes them), so this
 * is testable by hand.
 */
import { classifyQuestion, type AnswerType } from './answer-types';
import { isCodeLine, isDefining, isInstruction, isLeftover, typedSpans, type TypedSpan } from './answer-spans';

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
  /** What the question asks for (classified with either method; only the typed one acts on it). */
  answerType: AnswerType;
  /** What the span is: a typed phrase's type, 'definition' or 'instruction' for such a sentence; null for a plain sentence or a label's value. */
  spanType: AnswerType | null;
  /** The passage had more than `maxSentences` sentences: only the first ones were read. */
  truncated: boolean;
}

export interface PickOptions {
  /** Prefer sentences and spans of the question's answer type (default true); false: the untyped method. */
  typed?: boolean;
  /** Sentences read per passage (default MAX_ANSWER_SENTENCES); the rest are not considered. */
  maxSentences?: number;
  /** Rank added to a sentence of the expected type (default TYPE_BONUS; for tuning on the dev split). */
  typeBonus?: number;
  /** What finds typed phrases in a sentence (default typedSpans, compromise); other libraries plug in here to be compared. */
  tagger?: (sentence: string) => TypedSpan[];
}

/** Sentences read per passage: a passage is at most a few hundred words, so this binds only on odd input (a table or a log pasted as one passage). */
export const MAX_ANSWER_SENTENCES = 64;
/** Added to a sentence's rank when it holds a phrase of the expected type (tuned on the prose set's dev split). */
export const TYPE_BONUS = 0.15;
/** Subtracted from a code line's rank unless the question asks how to do something. */
const CODE_PENALTY = 0.5;

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
      if (
        m[0] === '' ||
        segment
          .slice(m.index! + m[0].length)
          .split(':')[0]
          .trim()
          .split(/\s+/).length > 5
      )
        continue;
      push(segment.slice(from, m.index), index + from);
      from = m.index! + m[0].length;
    }
    push(segment.slice(from), index + from);
  }
  // ICU ends a sentence after "ca." or "e.g." when a number or a name follows ("ca. 3200 B.C."):
  // such a piece joins the next one.
  for (let i = out.length - 2; i >= 0; i--) {
    if (!ABBREVIATION_END.test(out[i].text)) continue;
    const next = out[i + 1];
    out.splice(i, 2, { text: text.slice(out[i].start, next.end), start: out[i].start, end: next.end });
  }
  return out;
}

const ABBREVIATION_END = /(^|[\s(])(ca|c|approx|e\.g|i\.e|vs|cf|no|nos|fig|vol|St|Mt|Dr|Mr|Mrs|Ms|Jr|Sr)\.$/;

// A short English stop list: question words and function words carry no answer. Hand-written
// because the BM25 side uses PostgreSQL's analyser, which this pure, database-free module cannot call.
const STOP = new Set(
  (
    'a an and are as at be by did do does for from has have how in is it its of on or the to was were what when where which who whom whose why ' +
    'with this that these those there their them they he she his her i me my we our you your not no can could would should will shall may'
  ).split(' '),
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
export function pickAnswer(question: string, text: string, similarities?: readonly number[], options: PickOptions = {}): Answer | null {
  const all = splitSentences(text);
  if (all.length === 0) return null;
  const limit = Math.max(1, options.maxSentences ?? MAX_ANSWER_SENTENCES);
  const sentences = all.slice(0, limit);
  const truncated = all.length > sentences.length;
  const terms = new Set(contentTerms(question));
  const scoreOf = (sentence: TextSpan, i: number) => {
    const lexical = lexicalOverlap(terms, sentence.text);
    const dense = similarities?.[i];
    return dense === undefined ? lexical : DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * lexical;
  };
  if (options.typed === false) {
    let best = { sentence: sentences[0], score: -Infinity, ranked: -Infinity };
    sentences.forEach((sentence, i) => {
      const score = scoreOf(sentence, i);
      const ranked = score - i * POSITION_PENALTY;
      if (ranked > best.ranked) best = { sentence, score, ranked };
    });
    const { sentence, score } = best;
    const span = labelValueSpan(sentence, terms) ?? sentence;
    return { ...span, score, sentence, answerType: classifyQuestion(question), spanType: null, truncated };
  }
  return pickTyped(question, sentences, terms, scoreOf, truncated, options.typeBonus ?? TYPE_BONUS, options.tagger ?? typedSpans);
}

/** The typed choice: sentence rank = score + TYPE_BONUS where a phrase of the expected type is present, less CODE_PENALTY for code. */
function pickTyped(
  question: string,
  sentences: TextSpan[],
  terms: ReadonlySet<string>,
  scoreOf: (s: TextSpan, i: number) => number,
  truncated: boolean,
  typeBonus: number,
  tagger: (sentence: string) => TypedSpan[],
): Answer {
  const answerType = classifyQuestion(question);
  const asked = ` ${normalize(question)} `;
  const phrased = answerType === 'date' || answerType === 'quantity' || answerType === 'person' || answerType === 'place';
  interface Candidate {
    sentence: TextSpan;
    score: number;
    ranked: number;
    spans: TypedSpan[];
    label: TextSpan | null;
    fits: boolean;
  }
  const compatible = (sp: TypedSpan) =>
    sp.type === answerType || ((answerType === 'person' || answerType === 'place') && (sp.type === 'person' || sp.type === 'place'));
  // First the scores without the type (cheap); then the type, which runs compromise, only for the
  // sentences the bonus could still lift to the top: the same choice, a fraction of the tagging.
  const scored: Array<{ sentence: TextSpan; score: number; ranked: number }> = [];
  sentences.forEach((sentence, i) => {
    // Markup leftovers ("v0.3.3 -->") never answer; a passage of nothing else still gets its first sentence below.
    if (isLeftover(sentence.text)) return;
    const score = scoreOf(sentence, i);
    let ranked = score - i * POSITION_PENALTY;
    if (answerType !== 'instruction' && isCodeLine(sentence.text)) ranked -= CODE_PENALTY;
    scored.push({ sentence, score, ranked });
  });
  const top = Math.max(...scored.map((c) => c.ranked));
  let best: Candidate | null = null;
  for (const { sentence, score, ranked: base } of scored) {
    let ranked = base;
    let spans: Candidate['spans'] = [];
    let label: Candidate['label'] = null;
    let fits = false;
    if (base + typeBonus >= top) {
      if (phrased) {
        const tags = tagger(sentence.text);
        // A label that opens the sentence and whose value holds a phrase of the type answers it,
        // even when the question names that phrase ("name: Djibouti" for "the capital of Djibouti").
        const value = labelValueSpan(sentence, terms);
        if (
          value &&
          value.start - sentence.start <= 40 &&
          tags.some((sp) => compatible(sp) && sentence.start + sp.start >= value.start && sentence.start + sp.end <= value.end)
        )
          label = value;
        const found = tags.filter((sp) => !namedByQuestion(sentence.text.slice(sp.start, sp.end), asked, terms));
        spans = found.filter((sp) => sp.type === answerType);
        // compromise often cannot tell a person from a place ("name: Oslo" is neither to it): for a
        // who or where question any name fits, the asked type first.
        if (spans.length === 0) spans = found.filter(compatible);
        fits = spans.length > 0 || label !== null;
      } else if (answerType === 'definition') fits = isDefining(sentence.text);
      else if (answerType === 'instruction') fits = isInstruction(sentence.text);
    }
    if (fits) ranked += typeBonus;
    if (!best || ranked > best.ranked) best = { sentence, score, ranked, spans, label, fits };
  }
  if (!best) {
    // Only leftovers: the first sentence, untyped (a highlight, never an error).
    const sentence = sentences[0];
    return { ...sentence, score: scoreOf(sentence, 0), sentence, answerType, spanType: null, truncated };
  }
  const { sentence, score, spans, fits } = best as Candidate;
  if (best.label) return { ...best.label, score, sentence, answerType, spanType: answerType, truncated };
  const label = labelValueSpan(sentence, terms);
  if (spans.length > 0) {
    const span = nearestToQuestion(sentence.text, preferred(question, sentence.text, spans), terms);
    return {
      text: sentence.text.slice(span.start, span.end),
      start: sentence.start + span.start,
      end: sentence.start + span.end,
      score,
      sentence,
      answerType,
      spanType: span.type,
      truncated,
    };
  }
  if (label) return { ...label, score, sentence, answerType, spanType: null, truncated };
  return { ...sentence, score, sentence, answerType, spanType: fits ? answerType : null, truncated };
}

/** The question names the phrase already ("Kenya's" in "… between Kenya and Sudan"): it is not the answer. */
function namedByQuestion(phrase: string, asked: string, terms: ReadonlySet<string>): boolean {
  if (asked.includes(` ${normalize(phrase)} `)) return true;
  const words = contentTerms(phrase.replace(/['’]s\b/g, ''));
  return words.length > 0 && words.every((w) => terms.has(w));
}

/**
 * Among a sentence's quantities, the kind the question names: a share asks for a percentage, money
 * for an amount with a currency. Hand-written: the question's wording, not the library, says which.
 */
function preferred<T extends { start: number; end: number }>(question: string, text: string, spans: readonly T[]): readonly T[] {
  const pick = (test: RegExp) => {
    const hits = spans.filter((sp) => test.test(text.slice(sp.start, sp.end)));
    return hits.length > 0 ? hits : spans;
  };
  if (/\b(share|percentage|percent|proportion|fraction)\b/i.test(question)) return pick(/%|percent/i);
  if (/\b(money|cost|costs|worth|owe|owes|raise|raised|borrow|borrowed|spend|spent|price)\b/i.test(question))
    return pick(/[$€£¥]|\b(dollars?|euros?|pounds?|yen)\b/i);
  return spans;
}

/** Lower-cased words joined by single spaces, for "does the question already name this phrase". */
function normalize(s: string): string {
  return (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/**
 * Of several typed phrases in a sentence, the one the question's words surround: each distinct
 * question word adds exp(−distance / 40 characters) from its nearest occurrence; the first phrase
 * wins ties (and when no question word occurs). One-letter words ("x" of "8.x") are left out, one-digit numbers kept.
 */
function nearestToQuestion<T extends { start: number; end: number }>(text: string, spans: readonly T[], terms: ReadonlySet<string>): T {
  const at = new Map<string, number[]>();
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const term = contentTerms(m[0])[0];
    if (term && (term.length > 1 || /[0-9]/.test(term)) && terms.has(term)) at.set(term, [...(at.get(term) ?? []), m.index! + m[0].length / 2]);
  }
  let best = spans[0];
  let bestScore = 0;
  for (const sp of spans) {
    let score = 0;
    for (const places of at.values()) {
      const d = Math.min(...places.map((p) => (p < sp.start ? sp.start - p : p > sp.end ? p - sp.end : 0)));
      score += Math.exp(-d / 40);
    }
    if (score > bestScore) [best, bestScore] = [sp, score];
  }
  return best;
}
