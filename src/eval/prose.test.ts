import { prepareDocument } from '../ingest/prepare';
import { ANSWER_TYPES } from '../retrieval/answer-types';
import { buildProse, goldPassage, splitByDocument, type ProseQuestion } from './prose';

describe('the prose highlight set', () => {
  const dataset = buildProse();

  it('has at least 150 questions over two corpora, every type known and every id unique', () => {
    expect(dataset.prose.length).toBeGreaterThanOrEqual(150);
    expect(new Set(dataset.prose.map((q) => q.document.split('/')[0]))).toEqual(new Set(['factbook', 'pino']));
    expect(new Set(dataset.prose.map((q) => q.id)).size).toBe(dataset.prose.length);
    for (const q of dataset.prose) expect(ANSWER_TYPES).toContain(q.type);
  });

  it('finds one gold passage per question in its document, split at 100 words', () => {
    const passages = new Map(dataset.documents.map((d) => [d.key!, prepareDocument(d, { maxWords: 100 }).passages]));
    const unresolved = dataset.prose.filter((q) => !goldPassage(q, passages.get(q.document) ?? []));
    expect(unresolved.map((q) => q.id)).toEqual([]);
  });

  it('splits by document, half of each corpus’s documents on each side, the same every time', () => {
    const keys = dataset.prose.map((q) => q.document);
    const split = splitByDocument(keys);
    expect(splitByDocument([...keys].reverse())).toEqual(split);
    for (const corpus of ['factbook', 'pino']) {
      const docs = [...split.entries()].filter(([k]) => k.startsWith(`${corpus}/`));
      const dev = docs.filter(([, s]) => s === 'dev').length;
      expect(Math.abs(dev - (docs.length - dev))).toBeLessThanOrEqual(1);
    }
    const questions = { dev: 0, test: 0 };
    for (const k of keys) questions[split.get(k)!]++;
    expect(Math.min(questions.dev, questions.test)).toBeGreaterThanOrEqual(60);
  });

  it('refuses a gold passage the anchor does not single out', () => {
    const q: ProseQuestion = { id: 'x', document: 'd', question: 'When?', span: '1905', type: 'date' };
    expect(goldPassage(q, [{ text: 'In 1905 it began.' }, { text: 'By 1905 it ended.' }])).toBeNull();
    expect(goldPassage({ ...q, anchor: 'it ended' }, [{ text: 'In 1905 it began.' }, { text: 'By 1905 it ended.' }])).toEqual({ text: 'By 1905 it ended.' });
    expect(goldPassage({ ...q, anchor: 'it ended' }, [{ text: 'By 1906 it ended.' }])).toBeNull();
  });
});
