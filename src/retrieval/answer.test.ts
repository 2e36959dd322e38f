import { contentTerms, labelValueSpan, lexicalOverlap, pickAnswer, splitSentences } from './answer';
import { SPAN_TAGGER, typedSpans } from './answer-spans';

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

describe('typed answers', () => {
  const LIGHTHOUSE = 'Lindesnes Lighthouse is the oldest lighthouse in Norway. It was first lit in 1655. The light is 50 metres above the sea.';

  it('answers "when" with the date, not with the sentence that shares the entity', () => {
    const today = pickAnswer('When was Lindesnes Lighthouse first lit?', LIGHTHOUSE, undefined, { typed: false })!;
    expect(today.text).toBe('Lindesnes Lighthouse is the oldest lighthouse in Norway.');
    const typed = pickAnswer('When was Lindesnes Lighthouse first lit?', LIGHTHOUSE)!;
    expect(typed).toMatchObject({ text: '1655', answerType: 'date', spanType: 'date', truncated: false, sentence: { text: 'It was first lit in 1655.' } });
    expect(LIGHTHOUSE.slice(typed.start, typed.end)).toBe('1655');
  });

  it('answers "how many / how much" with the number and its unit, and "who" and "where" with names', () => {
    const text =
      'Kenya is the economic and transport hub of East Africa. Kenya issued its first sovereign bond offering in mid-2014, generating $2 billion at 6% interest. ' +
      'Agriculture remains the backbone of the Kenyan economy, contributing 25% of GDP. ' +
      'In 2014, President Michelle BACHELET introduced tax reforms. The boundary is unclear in the "Ilemi Triangle," which Kenya has administered since colonial times.';
    expect(pickAnswer('How much money did the first sovereign bond raise?', text)).toMatchObject({ text: '$2 billion', spanType: 'quantity' });
    expect(pickAnswer('How much does agriculture contribute to the economy?', text)).toMatchObject({ text: '25% of GDP', spanType: 'quantity' });
    expect(pickAnswer('Who introduced the tax reforms?', text)).toMatchObject({ text: 'Michelle BACHELET', spanType: 'person' });
    expect(pickAnswer('Where is the boundary unclear?', text)).toMatchObject({ text: 'Ilemi Triangle', spanType: 'place' });
  });

  it('keeps the best sentence when no phrase of the type is there', () => {
    const a = pickAnswer('When was the lighthouse painted?', 'The lighthouse is white. It was painted by volunteers.')!;
    expect(a).toMatchObject({ answerType: 'date', spanType: null });
    expect(a.text).toBe(a.sentence.text);
  });

  it('takes a phrase the question does not already name', () => {
    const a = pickAnswer('What happened in 2014 after the crisis of 2008?', 'The crisis of 2008 hurt growth. In 2014 growth returned, and by 2016 it was 3%.')!;
    expect(a.answerType).toBe('other');
    const b = pickAnswer('When did growth return after the 2008 crisis?', 'The 2008 crisis hurt growth, and growth returned in 2011.')!;
    expect(b.text).toBe('2011');
  });

  it('drops markup leftovers and, unless the question asks how to do something, code lines', () => {
    const text = 'v0.3.3 -->\nconst logger = pino({ level: "info" })\nThe level option sets the minimum level to log.';
    const a = pickAnswer('What does the level option set?', text, [0.9, 0.9, 0.1])!;
    expect(a.sentence.text).toBe('The level option sets the minimum level to log.');
    const code = pickAnswer('How do I set the logger level?', 'const logger = pino({ level: "info" })\nSee the level option.', [0.9, 0.1])!;
    expect(code.sentence.text).toBe('const logger = pino({ level: "info" })');
    expect(code.answerType).toBe('instruction');
  });

  it('reads the first N sentences of a long passage and says so', () => {
    const text = Array.from({ length: 10 }, (_, i) => `Sentence ${i} mentions apples.`).join(' ') + ' The harvest was in 1999.';
    const cut = pickAnswer('When was the harvest?', text, undefined, { maxSentences: 5 })!;
    expect(cut.truncated).toBe(true);
    expect(cut.sentence.end).toBeLessThanOrEqual(splitSentences(text)[4].end);
    const whole = pickAnswer('When was the harvest?', text)!;
    expect(whole).toMatchObject({ text: '1999', truncated: false });
  });

  it('never throws on odd input: another language, one word, a passage of code or of a table', () => {
    const table = 'Version | Release Date | Node.js 9.x | 2024-04-26 | 18, 20, 22 8.x | 2022-06-01 | 14, 16';
    for (const [q, text] of [
      ['Quand le phare a-t-il été allumé ?', LIGHTHOUSE],
      ['lighthouse', LIGHTHOUSE],
      ['When was the logger created?', 'const a = 1;\nconst b = require("x");\n}'],
      ['When was 8.x released?', table],
      ['', LIGHTHOUSE],
      ['When?', '-->'],
    ]) {
      const a = pickAnswer(q, text);
      expect(a).not.toBeNull();
      expect(text.slice(a!.start, a!.end)).toBe(a!.text);
    }
    expect(pickAnswer('lighthouse', LIGHTHOUSE)!.answerType).toBe('other');
    expect(pickAnswer('When was 8.x released?', table)!.text).toBe('2022-06-01');
  });
});

describe('SPAN_TAGGER', () => {
  // Stored spans (migration 0019) are read only when written by the same tagger version: any change
  // to typedSpans' output (its rules, compromise's version) must raise SPAN_TAGGER, or stored spans
  // and query-time tagging would disagree. This pins the output of version 1: when it fails, raise
  // SPAN_TAGGER and update the expected spans here.
  it('version 1 tags these sentences so', () => {
    expect(SPAN_TAGGER).toBe(1);
    const cases: Array<[string, Array<[string, string]>]> = [
      [
        'Lindesnes Lighthouse was first lit in 1655 by Dilma ROUSSEFF in Norway.',
        [
          ['Lighthouse', 'person'],
          ['1655', 'date'],
          ['Dilma ROUSSEFF', 'person'],
          ['Norway', 'place'],
        ],
      ],
      [
        'GDP grew by about 3.5% of GDP in 2014, to US$40 billion.',
        [
          ['GDP', 'person'],
          ['about 3.5% of GDP', 'quantity'],
          ['GDP', 'person'],
          ['2014', 'date'],
          ['US$40 billion', 'quantity'],
        ],
      ],
      [
        'President Yoweri Museveni has led Uganda since 1986; about 45 million people live in Kampala and the Nile valley.',
        [
          ['Yoweri Museveni', 'person'],
          ['Uganda', 'place'],
          ['1986', 'date'],
          ['about 45 million people', 'quantity'],
          ['Kampala', 'place'],
          ['Nile valley', 'place'],
          ['Nile valley', 'place'],
        ],
      ],
    ];
    for (const [sentence, expected] of cases) expect(typedSpans(sentence).map((sp) => [sentence.slice(sp.start, sp.end), sp.type])).toEqual(expected);
  });
});
