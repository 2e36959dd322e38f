import { parsePoint, pointTarget, scoreOutcomes } from './points';
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
});
