import { devFavours } from './self-tuned';
import type { RankScores } from './scores';

const scores = (mrr20: number, top1: number, top20: number, top100 = 1): RankScores => ({
  questions: 10,
  top: { '1': top1, '5': 0.5, '20': top20, '100': top100 },
  mrr20,
});

describe('which of the defaults and the self-tuned settings the dev split favours', () => {
  it('judges by MRR@20, then Top-20, then Top-1, and calls equal scores a tie', () => {
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.6, 0.3, 0.8))).toBe('self-tuned');
    expect(devFavours(scores(0.6, 0.3, 0.8), scores(0.5, 0.4, 0.9))).toBe('defaults');
    expect(devFavours(scores(0.5, 0.4, 0.8), scores(0.5, 0.3, 0.9))).toBe('self-tuned');
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.5, 0.3, 0.9))).toBe('defaults');
    expect(devFavours(scores(0.5, 0.4, 0.9), scores(0.5, 0.4, 0.9))).toBe('tie');
  });

  it('never favours self-tuned settings that find fewer answers in the top 100, whatever their first ranks', () => {
    // The Python docs' first budget rule: a better head (MRR 0.348 against 0.337) and a shorter reach.
    expect(devFavours(scores(0.337, 0.262, 0.571, 0.786), scores(0.348, 0.262, 0.595, 0.714))).toBe('defaults');
    // A deeper reach alone does not make them favoured: the head decides, as before.
    expect(devFavours(scores(0.5, 0.4, 0.9, 0.9), scores(0.4, 0.4, 0.9, 1))).toBe('defaults');
    expect(devFavours(scores(0.5, 0.4, 0.9, 0.9), scores(0.6, 0.4, 0.9, 0.9))).toBe('self-tuned');
  });
});
