import { contentTerms, labelValueSpan, lexicalOverlap, pickAnswer, splitSentences } from './answer';

const CAPITAL =
  'name: Oslo. geographic coordinates: 59 55 N, 10 45 E. time difference: UTC+1 (6 hours ahead of Washington, DC, during Standard Time). ' +
  'etymology: the origin of the name is uncertain, but the city is named after a hill.';

describe('splitSentences', () => {
  it('splits with offsets that point back into the text', () => {
    const text = '  First one.  Second: two!\nThird?';
    const sentences = splitSentences(text);
    expect(sentences.map((s) => s.text)).toEqual(['First one.', 'Second: two!', 'Third?']);
    for (const s of sentences) expect(text.slice(s.start, s.end)).toBe(s.text);
  });

  it('also ends a sentence where a lower-case label follows (Factbook fields)', () => {
    expect(splitSentences(CAPITAL).map((s) => s.text.split(':')[0])).toEqual(['name', 'geographic coordinates', 'time difference', 'etymology']);
    // Not after an abbreviation followed by ordinary words (no label follows).
    expect(splitSentences('Ships arrive at approx. ten knots, fast.')).toHaveLength(1);
  });

  it('returns nothing for blank text', () => {
    expect(splitSentences('   ')).toEqual([]);
  });
});

describe('lexical overlap', () => {
  it('drops stop words and matches plurals', () => {
    expect(contentTerms('What are the capitals of Norway?')).toEqual(['capital', 'norway']);
    expect(lexicalOverlap(new Set(['capital', 'norway']), 'Norway has one capital city.')).toBe(1);
    expect(lexicalOverlap(new Set(['capital', 'norway']), 'Oslo lies on a fjord.')).toBe(0);
    expect(lexicalOverlap(new Set(), 'anything')).toBe(0);
  });
});

describe('labelValueSpan', () => {
  const at = (text: string) => ({ text, start: 10, end: 10 + text.length });

  it('takes the value of a lone label', () => {
    expect(labelValueSpan(at('name: Oslo.'), new Set())).toEqual({ text: 'Oslo', start: 16, end: 20 });
  });

  it('takes the pair the question names among several', () => {
    const sentence = at('total: 323,802 sq km; land: 304,282 sq km; water: 19,520 sq km.');
    expect(labelValueSpan(sentence, new Set(['water', 'area']))?.text).toBe('19,520 sq km');
  });

  it('gives no span when several pairs stand and the question names none', () => {
    expect(labelValueSpan(at('total: 323,802 sq km; land: 304,282 sq km.'), new Set(['population']))).toBeNull();
  });

  it('ignores prose that happens to hold a colon after a long clause', () => {
    expect(labelValueSpan(at('The city that was founded by the king in 1048: Oslo.'), new Set())).toBeNull();
  });
});

describe('pickAnswer', () => {
  it('uses the lexical overlap alone without similarities, earlier sentences winning ties', () => {
    const answer = pickAnswer('Where is the hill the city is named after?', CAPITAL)!;
    expect(answer.sentence.text).toMatch(/^etymology:/);
    // The sentence is one label–value pair: the span is its value.
    expect(answer.text).toBe('the origin of the name is uncertain, but the city is named after a hill');
    expect(CAPITAL.slice(answer.start, answer.end)).toBe(answer.text);
    expect(pickAnswer('Zebra?', CAPITAL)!.sentence.text).toBe('name: Oslo.');
  });

  it('lets the encoder similarity decide where words do not', () => {
    // "capital" and "Norway" are in no sentence; the similarities favour the first.
    const answer = pickAnswer('What is the capital of Norway?', CAPITAL, [0.5, 0.2, 0.1, 0.3])!;
    expect(answer).toMatchObject({ text: 'Oslo', sentence: { text: 'name: Oslo.' } });
    expect(answer.score).toBeCloseTo(0.6 * 0.5, 6);
    expect(CAPITAL.slice(answer.start, answer.end)).toBe('Oslo');
  });

  it('blends similarity and overlap', () => {
    const text = 'Oslo is a city. The capital of Norway is Oslo.';
    // Sentence 1: 0.6·0.4 + 0.4·0 = 0.24; sentence 2: 0.6·0.2 + 0.4·1 = 0.52.
    const answer = pickAnswer('capital of Norway', text, [0.4, 0.2])!;
    expect(answer.text).toBe('The capital of Norway is Oslo.');
    expect(answer.sentence).toEqual({ text: 'The capital of Norway is Oslo.', start: 16, end: 46 });
    expect(answer.score).toBeCloseTo(0.52, 6);
  });

  it('returns null for a passage without text', () => {
    expect(pickAnswer('anything', ' ')).toBeNull();
  });
});
