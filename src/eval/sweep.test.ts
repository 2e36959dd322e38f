import { splitOf } from './split';
import { bestLambda, coarseGrid, fineGrid, type LambdaPoint } from './sweep';

describe('λ grid (DHR §5.3)', () => {
  it('steps 0.1 over [0, 2], then 0.01 within ±0.05 of the coarse best, clamped to [0, 2]', () => {
    expect(coarseGrid()).toHaveLength(21);
    expect(coarseGrid()[0]).toBe(0);
    expect(coarseGrid()[7]).toBe(0.7);
    expect(coarseGrid()[20]).toBe(2);
    expect(fineGrid(0.6)).toEqual([0.55, 0.56, 0.57, 0.58, 0.59, 0.6, 0.61, 0.62, 0.63, 0.64, 0.65]);
    expect(fineGrid(0)).toEqual([0, 0.01, 0.02, 0.03, 0.04, 0.05]);
    expect(fineGrid(2)).toEqual([1.95, 1.96, 1.97, 1.98, 1.99, 2]);
  });

  it('picks the best Top-20, then MRR@20, then the λ nearest 1, then the smaller', () => {
    const p = (lambda: number, top20: number, mrr20: number): LambdaPoint => ({ lambda, phase: 'coarse', top20, mrr20 });
    expect(bestLambda([p(0, 0.5, 0.3), p(0.4, 0.6, 0.2), p(1.5, 0.55, 0.4)]).lambda).toBe(0.4);
    expect(bestLambda([p(0.3, 0.6, 0.2), p(0.4, 0.6, 0.25)]).lambda).toBe(0.4);
    expect(bestLambda([p(0.2, 0.6, 0.25), p(1.3, 0.6, 0.25), p(1.9, 0.6, 0.25)]).lambda).toBe(1.3);
    expect(bestLambda([p(0.8, 0.6, 0.25), p(1.2, 0.6, 0.25)]).lambda).toBe(0.8);
  });
});

describe('dev/test split', () => {
  it('is a pure function of the id and splits roughly in half', () => {
    const ids = Array.from({ length: 400 }, (_, i) => `q${i}`);
    expect(ids.map(splitOf)).toEqual(ids.map(splitOf));
    const dev = ids.filter((id) => splitOf(id) === 'dev').length;
    expect(dev).toBeGreaterThan(160);
    expect(dev).toBeLessThan(240);
  });
});
