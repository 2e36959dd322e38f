import { EncoderSet } from '../src/encoders/set';
import { contentTerms, lexicalOverlap } from '../src/retrieval/answer';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

/** ScoredPassage.answer end to end: the real default encoder, the score recomputed here. */

const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const ASK = `query($q: String!, $mode: RetrievalMode) {
  retrieve(question: $q, k1: 10, k2: 5, mode: $mode) {
    passages { rank passage { text titlePath } answer { text start end score sentence { text start end } answerType spanType truncated } }
  }
}`;

const docs = [
  {
    key: 'norway',
    title: 'Norway',
    abstract: 'Norway is a country in northern Europe.',
    sections: [
      {
        title: 'Government',
        sections: [
          {
            title: 'Capital',
            text:
              'name: Oslo. geographic coordinates: 59 55 N, 10 45 E. time difference: UTC+1 (6 hours ahead of Washington, DC). ' +
              'etymology: the origin of the name is uncertain.',
          },
        ],
      },
    ],
  },
  {
    // The typed-answer example: a Markdown page whose first sentence shares the question's entity.
    key: 'lindesnes',
    markdown:
      '# Lindesnes\n\n## History\n\n<!-- v0.3.3 -->\n\nLindesnes Lighthouse is the oldest lighthouse in Norway. It was first lit in 1655. ' +
      'The present tower dates from 1915.\n\n```js\nconst lit = lighthouse.lit // lighthouse\n```\n',
  },
  {
    key: 'rhine',
    title: 'Rhine',
    abstract: 'The Rhine is a river. The Rhine flows from the Alps to the North Sea, passing Basel and Cologne.',
  },
];

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe('retrieve { passages { answer } } with encoders', () => {
  let api: TestApi;
  let encoders: EncoderSet;
  beforeAll(async () => {
    encoders = await EncoderSet.load();
    api = await createTestApi({}, encoders);
    expect(dataOf(await api.exec(INGEST, { docs })).ingestDocuments).toEqual({ created: 3, failed: 0 });
  });
  afterAll(async () => {
    await api?.close();
    await encoders?.close();
  });

  it('finds the label value in the capital passage, at offsets into the passage text', async () => {
    const { passages } = dataOf(await api.exec(ASK, { q: 'What is the capital of Norway?' })).retrieve;
    const capital = passages.find((p: any) => p.passage.titlePath.includes('Capital'));
    expect(capital.answer).toMatchObject({ text: 'Oslo', sentence: { text: 'name: Oslo.' } });
    for (const p of passages) {
      const { text } = p.passage;
      expect(text.slice(p.answer.start, p.answer.end)).toBe(p.answer.text);
      expect(text.slice(p.answer.sentence.start, p.answer.sentence.end)).toBe(p.answer.sentence.text);
    }
  });

  it('answers a "when" question in prose with the date, typed', async () => {
    const { passages } = dataOf(await api.exec(ASK, { q: 'When was Lindesnes Lighthouse first lit?' })).retrieve;
    const history = passages.find((p: any) => p.passage.titlePath.includes('History'));
    expect(history.answer).toMatchObject({
      text: '1655',
      answerType: 'DATE',
      spanType: 'DATE',
      truncated: false,
      sentence: { text: 'It was first lit in 1655.' },
    });
    expect(history.passage.text.slice(history.answer.start, history.answer.end)).toBe('1655');
  });

  it('gives a highlight, never an error, for a question in another language or of one word', async () => {
    for (const q of ['Quand le phare de Lindesnes a-t-il été allumé ?', 'Lindesnes']) {
      const result = await api.exec(ASK, { q });
      expect(result.errors).toBeUndefined();
      for (const p of dataOf(result).retrieve.passages) {
        expect(p.answer.answerType).toBe('OTHER');
        expect(p.passage.text.slice(p.answer.start, p.answer.end)).toBe(p.answer.text);
      }
    }
  });

  it('scores the sentence with the question–passage encoders and the word overlap', async () => {
    const question = 'Which cities does the Rhine pass?';
    const { passages } = dataOf(await api.exec(ASK, { q: question })).retrieve;
    const rhine = passages.find((p: any) => p.passage.text.startsWith('The Rhine'));
    expect(rhine.answer.sentence.text).toBe('The Rhine flows from the Alps to the North Sea, passing Basel and Cologne.');
    // Recomputed here: 0.6 · E_Q^ψ(q)·E_P^ψ(sentence) + 0.4 · share of the question's words.
    const q = (await encoders.byRole.questionPassage.encode([question], 'questionPassage')).vectors[0];
    const s = (await encoders.byRole.passage.encode([rhine.answer.sentence.text], 'passage')).vectors[0];
    const expected = 0.6 * dot(q, s) + 0.4 * lexicalOverlap(new Set(contentTerms(question)), rhine.answer.sentence.text);
    expect(rhine.answer.score).toBeCloseTo(expected, 4);
  });
});

describe('retrieve { passages { answer } } without encoders', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
    dataOf(await api.exec(INGEST, { docs }));
  });
  afterAll(() => api?.close());

  it('falls back to the word overlap alone', async () => {
    const { passages } = dataOf(await api.exec(ASK, { q: 'Where does the Rhine flow to?', mode: 'LEXICAL' })).retrieve;
    expect(passages[0].answer).toMatchObject({
      sentence: { text: 'The Rhine flows from the Alps to the North Sea, passing Basel and Cologne.' },
      score: 1, // rhine and flow: both words are in the sentence
      answerType: 'PLACE',
      spanType: 'PLACE', // "where": a place inside that sentence, not the whole of it
    });
    expect(['Alps', 'North Sea', 'Basel and Cologne']).toContain(passages[0].answer.text);
  });
});
