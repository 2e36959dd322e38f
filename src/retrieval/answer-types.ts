/**
 * What a question asks for: the kind of phrase a reader would underline as its answer.
 * - date: when / what year / since which version
 * - quantity: how many / how much / how long / what share — a number with its unit
 * - person: who, or which company / bank / service — a person or an organisation
 * - place: where, or which country / city / island / region
 * - definition: what is X / define X / what does X do — a defining sentence
 * - instruction: how do I / how can I / how to — an instruction or a code span
 * - other: anything else (what colour, which module…): the best sentence, no typed span
 *
 * Hand-written patterns over the question's first words: the NLP libraries compared (compromise,
 * wink-nlp, chrono-node) tag the words of a text but none classifies a question's expected answer,
 * and an English question's type is carried by a handful of fixed openings.
 */
export const ANSWER_TYPES = ['date', 'quantity', 'person', 'place', 'definition', 'instruction', 'other'] as const;
export type AnswerType = (typeof ANSWER_TYPES)[number];

/** Nouns after "which"/"what" that ask for a place, or for a person or organisation. */
const PLACE_NOUNS = new Set(
  'place city town capital country countries region regions island islands rocks reef reefs river sea ocean state states province continent area land territory border coast valley port'.split(
    ' ',
  ),
);
const PERSON_NOUNS = new Set(
  'person people president minister leader king queen company companies bank banks organisation organization organisations organizations service group agency party author maintainer team firm'.split(
    ' ',
  ),
);
const DATE_NOUNS = new Set('year years date day month century decade version release'.split(' '));
const QUANTITY_NOUNS = new Set(
  'gdp income rate revenue debt population cost price size surplus deficit growth unemployment inflation worth overhead'.split(' '),
);

/** The question's words, lower-cased, with punctuation dropped (apostrophes kept inside words). */
function words(question: string): string[] {
  return question.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [];
}

/** The type named by one of the first words after "which"/"what" ("which parent bank", "what was Kenya's GDP"), if one names it. */
function nounType(rest: string[]): AnswerType | null {
  for (const w of rest.slice(0, 4)) {
    if (DATE_NOUNS.has(w)) return 'date';
    if (PLACE_NOUNS.has(w)) return 'place';
    if (PERSON_NOUNS.has(w)) return 'person';
    if (QUANTITY_NOUNS.has(w)) return 'quantity';
  }
  return null;
}

/** The expected answer type of a question (English; anything else, or a single word, is 'other'). */
export function classifyQuestion(question: string): AnswerType {
  let w = words(question);
  // "In what year…", "By how much…", "Since which version…", "Over which city…", "Until when…":
  // a leading preposition does not change what is asked.
  const lead = new Set(['in', 'by', 'since', 'from', 'until', 'till', 'to', 'at', 'on', 'over', 'for', 'during', 'with', 'under', 'of', 'and', 'so']);
  while (w.length > 1 && lead.has(w[0])) w = w.slice(1);
  if (w.length < 2) return 'other';
  const [first, second] = w;
  if (first === 'when') return 'date';
  if (first === 'where' || first === 'whereabouts') return 'place';
  if (first === 'who' || first === 'whom' || first === 'whose') return 'person';
  if (first === 'how') {
    if (
      ['many', 'much', 'long', 'big', 'large', 'high', 'fast', 'deep', 'far', 'old', 'often', 'low', 'small', 'tall', 'wide', 'heavy', 'strong'].includes(
        second,
      )
    )
      return 'quantity';
    // "How do I …", "How can I …", "How must paths …", "How to …": an instruction.
    if (['do', 'does', 'can', 'could', 'should', 'must', 'to', 'would', 'may', 'is', 'are'].includes(second)) return 'instruction';
    return 'other';
  }
  if (first === 'define' || first === 'definition' || (first === 'meaning' && second === 'of')) return 'definition';
  if (first === 'which' || first === 'what') {
    // "Which package do I install…", "What should I use…": the reader wants to do something.
    if (/\b(do|should|can|must) i\b/.test(w.slice(1, 5).join(' '))) return 'instruction';
    if (['share', 'percentage', 'proportion', 'fraction', 'amount', 'number', 'percent'].includes(second)) return 'quantity';
    const named = nounType(w.slice(1));
    if (named) return named;
    if (first === 'what' && (second === 'is' || second === 'are' || second === 'was' || second === 'were')) {
      // "What is the capital of X?" asks for a property (a place here), "What is the default key
      // for errors?" for a value; "What is keiretsu?" and "What is a pino transport?" for a definition.
      const rest = w.slice(2);
      if (rest.some((x) => /['’]s$/.test(x))) return nounType(rest) ?? 'other';
      if (rest[0] === 'the' && rest.includes('of')) return nounType(rest.slice(1)) ?? 'other';
      if (rest[0] === 'the' && rest.length > 3) return nounType(rest.slice(1)) ?? 'other';
      return 'definition';
    }
    if (first === 'what' && (second === 'does' || second === 'do') && ['do', 'mean', 'means'].includes(w[w.length - 1])) return 'definition';
    return 'other';
  }
  return 'other';
}
