import { firstHitRank, hasAnswer, hitAtK, mrrAtK, normalizeAnswerText, percentile } from './metrics';

describe('answer matching (DPR-style)', () => {
  it('folds case, accents, punctuation and articles', () => {
    expect(normalizeAnswerText('The  Yaoundé, (Cameroon)!')).toBe('yaounde cameroon');
    expect(normalizeAnswerText("N'Djamena")).toBe('n djamena');
  });

  it('matches whole words only', () => {
    expect(hasAnswer('name: Yaounde. geographic coordinates: 3 52 N', ['Yaoundé'])).toBe(true);
    expect(hasAnswer("name: N'Djamena", ['Ndjamena', "N'Djamena"])).toBe(true);
    expect(hasAnswer('Romania is not Rome', ['Rom'])).toBe(false);
    expect(hasAnswer('anything', [''])).toBe(false);
    expect(hasAnswer('the capital is Saint-Denis', ['Saint Denis'])).toBe(true);
  });
});

describe('rank metrics, against hand-computed values', () => {
  // Four questions: first hits at ranks 1, 3, 25 and never.
  const ranks = [1, 3, 25, null];

  it('finds the 1-based rank of the first hit', () => {
    expect(firstHitRank(['a', 'b', 'c'], (x) => x === 'c')).toBe(3);
    expect(firstHitRank(['a', 'b'], (x) => x === 'z')).toBeNull();
  });

  it('computes top-k accuracy', () => {
    expect(hitAtK(ranks, 1)).toBe(0.25);
    expect(hitAtK(ranks, 5)).toBe(0.5);
    expect(hitAtK(ranks, 20)).toBe(0.5);
    expect(hitAtK(ranks, 100)).toBe(0.75);
    expect(hitAtK([], 5)).toBe(0);
  });

  it('computes MRR@k, ignoring hits below k', () => {
    // (1 + 1/3 + 0 + 0) / 4
    expect(mrrAtK(ranks, 20)).toBeCloseTo((1 + 1 / 3) / 4, 12);
    // (1 + 1/3 + 1/25) / 4
    expect(mrrAtK(ranks, 100)).toBeCloseTo((1 + 1 / 3 + 1 / 25) / 4, 12);
  });

  it('takes percentiles by nearest rank', () => {
    const values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(values, 50)).toBe(5);
    expect(percentile(values, 95)).toBe(10);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile([], 50)).toBe(0);
  });
});
