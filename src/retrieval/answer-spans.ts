/**
 * Typed phrases inside a sentence: dates, quantities with their unit, people and
 * organisations, places, found with compromise (an offline English NLP library: part-of-speech
 * tags and named-entity guesses from its npm package, no model download), so a "when" question's
 * highlight can be "7 June 1905" rather than the sentence that mentions the country. Also the
 * sentence-level tests: a defining sentence, an instruction, a code line, a markup leftover.
 *
 * compromise was chosen over wink-nlp (+ wink-eng-lite-web-model) and chrono-node on the dev split
 * of the prose highlight set (docs/eval/README.md, "Answers in prose"): wink's lite model finds
 * dates and numbers as well but no people or places, chrono finds only dates (and not a bare year).
 */
import nlp from 'compromise';
import { LRUCache } from 'lru-cache';
import type { AnswerType } from './answer-types';

/** A typed phrase: offsets into the sentence's text (UTF-16, end exclusive). */
export interface TypedSpan {
  start: number;
  end: number;
  type: AnswerType;
}

interface Term {
  text: string;
  post: string;
  start: number;
  end: number;
  tags: Set<string>;
}

/** compromise's terms of a text with their offsets and tags. */
function terms(text: string): Term[] {
  const out: Term[] = [];
  // The Factbook writes surnames in capitals ("Dilma ROUSSEFF"), which compromise reads as an
  // acronym; after a capitalised word they become "Rousseff" (same length, so offsets hold).
  const cased = text.replace(/(?<=\b[A-Z][a-z]+\s)([A-Z])([A-Z'-]{2,})\b/g, (_m, a: string, rest: string) => a + rest.toLowerCase());
  for (const sentence of nlp(cased).json({ offset: true, terms: { offset: true } }) as Array<{
    terms: Array<{ text: string; post: string; tags: string[]; offset: { start: number; length: number } }>;
  }>) {
    for (const t of sentence.terms)
      out.push({ text: t.text, post: t.post, start: t.offset.start, end: t.offset.start + t.offset.length, tags: new Set(t.tags) });
  }
  return out;
}

/** Punctuation after a term that ends a phrase (a comma, a semicolon, a bracket, a sentence end). */
const BREAKS = /[,;:()[\]."“”!?]/;
const breaksAfter = (t: Term) => BREAKS.test(t.post);

// Words that belong to a number or a date phrase although compromise does not tag them so.
// Hand-written: compromise tags "about" or "late" as an adverb/adjective, not as part of the value.
const QUANTITY_LEAD = new Set([
  'about',
  'around',
  'over',
  'nearly',
  'approximately',
  'almost',
  'roughly',
  'some',
  'under',
  'below',
  'above',
  'up',
  'more',
  'less',
  'fewer',
  'than',
  'at',
  'least',
  'most',
  'just',
  'only',
  'an',
  'additional',
  'extra',
  'us',
]);
const DATE_LEAD = new Set(['early', 'mid', 'late', 'fall', 'spring', 'summer', 'autumn', 'winter', 'ca', 'circa', 'the']);
const MONTHS = /^(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?$/i;
/** A year or a date in digits (1905, 2022-06-01, 3/5/2014, mid-2014, the 1990s): compromise does not always tag these as dates. */
const DATEISH = /^(1[0-9]{3}|20[0-9]{2}|[0-9]{4}-[0-9]{2}(-[0-9]{2})?|[0-9]{1,2}\/[0-9]{1,2}\/[0-9]{2,4}|mid-[0-9]{4}|[0-9]{3,4}s)$/i;
const ERA = /^(b\.?c\.?e?|a\.?d\.?|c\.?e\.?)$/i;

const isValue = (t: Term) => (t.tags.has('Value') && !t.tags.has('Ordinal')) || /^(us)?[$€£¥]?[0-9][0-9.,]*(%|x|×)?$/i.test(t.text);
// compromise tags whole phrases around a date as #Date ("3200 B.C. that the Two Lands…"): only
// numbers, months, weekdays and eras count as the date itself.
const isDate = (t: Term) =>
  MONTHS.test(t.text) ||
  DATEISH.test(t.text) ||
  ERA.test(t.text) ||
  t.tags.has('WeekDay') ||
  ((t.tags.has('Date') || t.tags.has('Year')) && /[0-9]/.test(t.text) && !/%/.test(t.post));
const isName = (t: Term) => t.tags.has('ProperNoun') || t.tags.has('Person') || t.tags.has('Organization') || t.tags.has('Place');
/** Titles that precede a name but are not part of it ("President Dilma Rousseff"). */
const TITLES = /^(president|presidents|prime|minister|finance|former|king|queen|emperor|pm|mr|mrs|ms|dr|sir|the)$/i;

/** Grows [i, j] over terms that satisfy `more`, not across a break. */
function grow(ts: Term[], i: number, j: number, before: (t: Term) => boolean, after: (t: Term) => boolean, limit = 3): [number, number] {
  let a = i;
  while (a > 0 && i - a < limit && !breaksAfter(ts[a - 1]) && before(ts[a - 1])) a--;
  let b = j;
  while (b + 1 < ts.length && b - j < limit && !breaksAfter(ts[b]) && after(ts[b + 1])) b++;
  return [a, b];
}

/** Runs of consecutive terms that satisfy `is`, not across punctuation. */
function runs(ts: Term[], is: (t: Term) => boolean): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < ts.length; i++) {
    if (!is(ts[i])) continue;
    let j = i;
    while (j + 1 < ts.length && !breaksAfter(ts[j]) && is(ts[j + 1])) j++;
    out.push([i, j]);
    i = j;
  }
  return out;
}

const isUnit = (t: Term) =>
  (t.tags.has('Noun') || t.tags.has('Unit') || t.tags.has('Value') || (t.tags.has('Adjective') && !t.tags.has('Comparable'))) &&
  !t.tags.has('Pronoun') &&
  !t.tags.has('Preposition') &&
  !(t.tags.has('Date') && /[0-9]/.test(t.text));
const isOfPhrase = (t: Term) =>
  (t.tags.has('Noun') || t.tags.has('Adjective') || t.tags.has('Possessive') || t.tags.has('ProperNoun')) && !t.tags.has('Pronoun');

/**
 * The version of typedSpans' output that stored spans carry (migration 0019). Raise it with any
 * change to what typedSpans returns (its rules or compromise's version): stored spans of another
 * version are not read, and those sentences are tagged at query time until they are re-embedded.
 * src/retrieval/answer.test.ts pins the output of a few sentences to catch a forgotten raise.
 */
export const SPAN_TAGGER = 1;

/** Sentences already tagged: a popular passage's sentences meet many questions, and tagging is the costly part (ms a sentence). */
const tagged = new LRUCache<string, TypedSpan[]>({ max: 10_000 });

/** Typed phrases of a sentence, in order; one phrase may carry several types (a year is a date, not a quantity). Cached per process. */
export function typedSpans(text: string): TypedSpan[] {
  let spans = tagged.get(text);
  if (!spans) tagged.set(text, (spans = tagText(text)));
  return spans;
}

/** Empties the per-process cache (bench:answer times tagging cold). */
export function forgetTags(): void {
  tagged.clear();
}

/** typedSpans without the cache: for tagging a corpus once (ingest), which would only churn it. */
export function tagSentence(text: string): TypedSpan[] {
  return tagged.get(text) ?? tagText(text);
}

function tagText(text: string): TypedSpan[] {
  const ts = terms(text);
  const out: TypedSpan[] = [];
  const push = (a: number, b: number, type: AnswerType) => {
    let end = ts[b].end;
    // A percent sign or a closing bracket that compromise leaves in `post`.
    const tail = /^[%)]+/.exec(ts[b].post);
    if (tail && (type === 'quantity' || tail[0].includes(')'))) end += type === 'quantity' && tail[0].startsWith('%') ? 1 : 0;
    let start = ts[a].start;
    // Whole words: "50-year" (compromise splits at the hyphen), "US$40", "258.745ms".
    while (start > 0 && /[\p{L}\p{N}$€£¥-]/u.test(text[start - 1])) start--;
    while (end < text.length && /[\p{L}\p{N}%-]/u.test(text[end])) end++;
    while (end > start && /[\s|,;:]/.test(text[end - 1])) end--;
    out.push({ start, end, type });
  };

  // "3200 B.C.": a number before an era is a year.
  const era = new Set(ts.flatMap((t, k) => (k > 0 && ERA.test(t.text) && /^[0-9]+$/.test(ts[k - 1].text) ? [k - 1] : [])));
  const dates = runs(ts, (t) => isDate(t) || era.has(ts.indexOf(t))).filter(([i, j]) => ts.slice(i, j + 1).some((t) => /[0-9]/.test(t.text)));
  for (let k = 0; k < dates.length; k++) {
    let [i, j] = dates[k];
    // "from 2004 to 2008", "1999 and 2001": a range is one answer.
    const next = dates[k + 1];
    if (next && next[0] === j + 2 && /^(to|and|until|through|till|-|–)$/i.test(ts[j + 1].text) && !breaksAfter(ts[j])) {
      j = next[1];
      k++;
      if (i > 0 && /^(from|between)$/i.test(ts[i - 1].text)) i--;
    }
    let [a] = grow(
      ts,
      i,
      j,
      (t) => DATE_LEAD.has(t.text.toLowerCase().replace(/\.$/, '')),
      () => false,
      2,
    );
    // "ca. 3200 B.C.": the abbreviation's full stop is not a break.
    if (a > 0 && /^(ca|c|circa)$/i.test(ts[a - 1].text) && /^\.\s*$/.test(ts[a - 1].post)) a--;
    push(a, j, 'date');
  }
  for (const [i, j] of runs(ts, (t) => isValue(t) && !era.has(ts.indexOf(t)) && !(isDate(t) && !t.tags.has('Percent')))) {
    const [a] = grow(
      ts,
      i,
      j,
      (t) => QUANTITY_LEAD.has(t.text.toLowerCase()),
      () => false,
      4,
    );
    let [, b] = grow(ts, i, j, () => false, isUnit, 3);
    // "25% of GDP", "19% of government revenue": a share names what it is a share of.
    if ((ts[j].tags.has('Percent') || /%/.test(ts[j].post)) && b === j && ts[j + 1]?.text.toLowerCase() === 'of' && !breaksAfter(ts[j])) {
      let c = j + 1;
      while (c + 1 < ts.length && c - j < 4 && !breaksAfter(ts[c]) && isOfPhrase(ts[c + 1])) c++;
      if (c > j + 1) b = c;
    }
    push(a, b, 'quantity');
  }
  // A capitalised word inside a sentence is a name even where compromise does not say so ("GitHub Actions").
  // So is a word in capitals ("YAOUNDE (capital) 3.066 million", "PORT LOUIS"), even first.
  const nameLike = (t: Term, k: number) =>
    (isName(t) || (k > 0 && /^[A-Z][\p{L}]+/u.test(t.text)) || /^[A-Z][A-Z'-]{2,}$/.test(t.text)) && !isDate(t) && !isValue(t);
  const nameRuns: Array<[number, number]> = [];
  for (let k = 0; k < ts.length; k++) {
    if (!nameLike(ts[k], k)) continue;
    let e = k;
    while (e + 1 < ts.length && !breaksAfter(ts[e]) && nameLike(ts[e + 1], e + 1)) e++;
    let b = k;
    while (b < e && TITLES.test(ts[b].text)) b++;
    if (!TITLES.test(ts[b].text)) nameRuns.push([b, e]);
    k = e;
  }
  // "Tiran and Sanafir", "India and Indonesia": two names joined by "and" answer together.
  for (let k = 0; k + 1 < nameRuns.length; k++) {
    const [, e] = nameRuns[k];
    if (nameRuns[k + 1][0] === e + 2 && ts[e + 1].text.toLowerCase() === 'and' && !breaksAfter(ts[e]))
      nameRuns.splice(k, 2, [nameRuns[k][0], nameRuns[k + 1][1]]);
  }
  for (const [i, j] of nameRuns) {
    const run = ts.slice(i, j + 1);
    const place = run.some((t) => t.tags.has('Place') || t.tags.has('Country') || t.tags.has('City') || t.tags.has('Region'));
    const person = run.some((t) => t.tags.has('Person') || t.tags.has('Organization') || t.tags.has('FirstName') || t.tags.has('LastName'));
    // "in Norway", "in the Ilemi Triangle": a name after a preposition of place is a place.
    const back = i > 0 && ts[i - 1].text.toLowerCase() === 'the' ? 2 : 1;
    const before = ts[i - back]?.text.toLowerCase();
    const locative = before !== undefined && ['in', 'at', 'to', 'from', 'over', 'near', 'into', 'across', 'on', 'off'].includes(before);
    if (place || locative) push(i, j, 'place');
    if (person || !(place || locative)) push(i, j, 'person');
  }
  // A place named with a common head noun after a proper noun: "the Nile valley", "Halaib region".
  for (let k = 1; k < ts.length; k++) {
    if (
      /^(valley|region|river|island|islands|reef|rocks|sea|coast|land|triangle|strait|gulf|mountains|desert|field)$/i.test(ts[k].text) &&
      nameLike(ts[k - 1], k - 1) &&
      !breaksAfter(ts[k - 1])
    ) {
      let a = k - 1;
      while (a > 0 && nameLike(ts[a - 1], a - 1) && !breaksAfter(ts[a - 1])) a--;
      push(a, k, 'place');
    }
  }
  return out.sort((x, y) => x.start - y.start || y.end - x.end);
}

/** Markup leftovers and lines without words: `v0.3.3 -->`, `<!-- … -->`, a lone fence or bullet. */
export function isLeftover(sentence: string): boolean {
  if (/<!--|-->/.test(sentence)) return true;
  const words = sentence.match(/\p{L}{2,}/gu) ?? [];
  return words.length < 2;
}

/**
 * A line of code rather than prose: statements, calls, JSON, shell prompts. Hand-written: the
 * NLP libraries read code as (odd) English; these marks are what tells a reader it is code.
 */
export function isCodeLine(sentence: string): boolean {
  const s = sentence.trim();
  if (/^(const|let|var|import|export|function|return|if|for|while|class|async|await)\b/.test(s)) return true;
  if (/^(\/\/|#!|\$ |> |\{"|\[\{|<\/?[a-z])/.test(s)) return true;
  if (/=>|require\(|\)\s*;?\s*$|;\s*$|^[})\]]/.test(s) && !/\s(is|are|the|a|to)\s/.test(s)) return true;
  // Brackets, semicolons and calls ("f(x)"), not the parentheses of prose ("Tirana (Tirane).").
  const symbols = (s.match(/[{}[\];=<>]|[\w$]\(/g) ?? []).length;
  return symbols >= 2 && symbols / s.length > 0.05;
}

/** A sentence that tells the reader to do something: an imperative, a command, a setting. */
const DO =
  '(use|set|pass|passing|install|call|add|run|see|configure|specify|supply|enable|disable|pin|create|write|import|require|instantiate|place|wrap|using|setting)';
const INSTRUCTING = new RegExp(
  `(^|[,:;]\\s*|\\b(simply|just|then|you can|you should|you must|is to|are to|can be used to|by|recommend(ed)?|should|must)\\s+)${DO}\\b`,
  'i',
);
/**
 * Hand-written: compromise's imperative tag also fires on a sentence's subject ("`systemd` makes…",
 * "Let's assume…"), so a command is recognised by where its verb stands: first, after a comma
 * ("To do this, use…"), or after "is to", "you can", "by"; or as `npm install`, "can be used".
 */
export function isInstruction(sentence: string): boolean {
  return /\bnpm (install|i)\b|\bcan be used\b|\bis used to\b/.test(sentence) || INSTRUCTING.test(sentence);
}

/** A defining sentence: "X is …", "X are …", "X means …", "… known as X". */
export function isDefining(sentence: string): boolean {
  return /\b(is|are|was|were|means|refers to|is defined as|known as|stands for|represents?|symboli[sz]es?)\b/i.test(sentence);
}
