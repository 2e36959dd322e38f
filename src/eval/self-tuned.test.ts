import { devFavours } from './self-tuned';
import type { RankScores } from './scores';

const scores = (mrr20: number, top1: number, top20: number): RankScores => ({ questions: 10, top: { '1': top1, '5': 0.5, '20': top20, '100': 1 }, mrr20 });

describe('which of the defaults and the self-tuned settings the dev split favours', () => {
  it('judges by MRR@20, then Top-20, then Top-1, and calls equal scores a tie', () => {
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.6, 0.3, 0.8))).toBe('self-tuned');
    expect(devFavours(scores(0.6, 0.3, 0.8), scores(0.5, 0.4, 0.9))).toBe('defaults');
    expect(devFavours(scores(0.5, 0.4, 0.8), scores(0.5, 0.3, 0.9))).toBe('self-tuned');
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.5, 0.3, 0.9))).toBe('defaults');
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.5, 0.4, 0.9))).toBe('tie');
  });
});
