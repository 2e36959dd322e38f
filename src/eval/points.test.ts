import { parsePoint, pointsMarkdown, pointTarget, scoreOutcomes } from './points';
import type { QuestionOutcome } from './run';
import type { EvalDataset } from './types';

const outcome = (docRank: number | null, sectionRank: number | null, answerRank?: number | null): QuestionOutcome => ({
  id: 'q',
  docRank,
  sectionRank,
  answerRank,
  ms: 1,
  top: [],
  hits: {},
});

describe('dhr eval --points', () => {
  it('takes a JSON object of ranking parameters and refuses what a question would be refused, naming it', () => {
    expect(parsePoint('{"titleLink":1,"mode":"LEXICAL"}')).toEqual({ titleLink: 1, mode: 'LEXICAL' });
    expect(() => parsePoint('titleLink=1')).toThrow(/JSON object/);
    expect(() => parsePoint('[1]')).toThrow(/JSON object/);
    expect(() => parsePoint('{"mode":"NOPE"}')).toThrow(/unknown mode "NOPE"/);
    expect(() => parsePoint('{"alpha":2}')).toThrow(/alpha must be/);
  });

  it('judges a set by answers, else by gold sections where every question has one, else by documents', () => {
    const set = (questions: Partial<EvalDataset['questions'][number]>[]) => ({ questions }) as EvalDataset;
    expect(pointTarget(set([{ answers: ['x'], goldSections: [] }]))).toBe('answer');
    expect(pointTarget(set([{ goldSections: [{ document: 'd', path: ['s'] }] }]))).toBe('section');
    expect(pointTarget(set([{ goldSections: [{ document: 'd', path: ['s'] }] }, { goldSections: [] }]))).toBe('document');
  });

  it('scores Top-k of the target, document@1, and the section first among questions whose document is first', () => {
    const rows = [outcome(1, 1), outcome(1, 3), outcome(2, 2), outcome(null, null)];
    const row = scoreOutcomes('p', rows, 'section');
    expect(row.top).toEqual({ '1': 25, '5': 75, '20': 75 });
    expect(row.document1).toBe(50);
    expect(row.sectionGivenDocument).toBe(50);
    expect(scoreOutcomes('p', [outcome(3, null, 1)], 'answer').top['1']).toBe(100);
  });

  it('breaks the figures down by question form where a set has forms: Top-5 and the section first, document first, a column per point', () => {
    const climate = [outcome(1, 1), outcome(1, 7)];
    const currency = [outcome(1, 2)];
    const rows = [scoreOutcomes('{}', [...climate, ...currency], 'section')];
    const shapes = [
      { shape: 'Climate', questions: 2, rows: [scoreOutcomes('{}', climate, 'section')] },
      { shape: 'Exchange rates', questions: 1, rows: [scoreOutcomes('{}', currency, 'section')] },
    ];
    const set = { name: 'attributes', description: 'a set' } as EvalDataset;
    const md = pointsMarkdown(set, 'dev', { rows, questions: 3, target: 'section', shapes }, 'dhr eval');
    expect(md).toContain('| form | questions | `{}` |');
    expect(md).toContain('| Climate | 2 | 50.0 · 50.0 |');
    expect(md).toContain('| Exchange rates | 1 | 100.0 · 0.0 |');
    expect(pointsMarkdown(set, 'dev', { rows, questions: 3, target: 'section', shapes: [] }, 'dhr eval')).not.toContain('By question form');
  });
});
