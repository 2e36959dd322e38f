/** Per-mode aggregates of question outcomes: Top-k accuracies, MRR@20 and latency percentiles. */
import { hitAtK, mrrAtK, percentile } from './metrics';
import type { QuestionOutcome } from './run';

export const KS = [1, 5, 20, 100] as const;

export interface RankScores {
  /** Questions the metric applies to. */
  questions: number;
  /** Top-k accuracy for k in KS, keyed "1", "5", "20", "100". */
  top: Record<string, number>;
  mrr20: number;
}

export interface Scores {
  questions: number;
  document: RankScores;
  section: RankScores | null;
  answer: RankScores | null;
  /** Modes with a document stage: a gold document among the first k documents it kept (recall@k1 at k = k1). */
  stage: RankScores | null;
  latencyMs: { p50: number; p95: number; mean: number };
}

/** What a data set is judged by: answer accuracy where answers exist (DPR), else gold-document hits. */
export type Target = 'answer' | 'section' | 'document';

const round = (x: number) => Math.round(x * 10000) / 10000;

function rankScores(ranks: Array<number | null>): RankScores {
  return {
    questions: ranks.length,
    top: Object.fromEntries(KS.map((k) => [String(k), round(hitAtK(ranks, k))])),
    mrr20: round(mrrAtK(ranks, 20)),
  };
}

export function scoreOutcomes(outcomes: readonly QuestionOutcome[]): Scores {
  const sections = outcomes.filter((o) => o.sectionRank !== undefined).map((o) => o.sectionRank as number | null);
  const answers = outcomes.filter((o) => o.answerRank !== undefined).map((o) => o.answerRank as number | null);
  const stage = outcomes.filter((o) => o.stageRank !== undefined).map((o) => o.stageRank as number | null);
  const ms = outcomes.map((o) => o.ms);
  return {
    questions: outcomes.length,
    document: rankScores(outcomes.map((o) => o.docRank)),
    section: sections.length > 0 ? rankScores(sections) : null,
    answer: answers.length > 0 ? rankScores(answers) : null,
    stage: stage.length > 0 ? rankScores(stage) : null,
    latencyMs: {
      p50: round(percentile(ms, 50)),
      p95: round(percentile(ms, 95)),
      mean: round(ms.reduce((a, b) => a + b, 0) / Math.max(1, ms.length)),
    },
  };
}

/** The rank of the target a question is judged by. */
export function targetRank(o: QuestionOutcome, target: Target): number | null | undefined {
  return target === 'answer' ? o.answerRank : target === 'section' ? o.sectionRank : o.docRank;
}

export function targetScores(s: Scores, target: Target): RankScores | null {
  return target === 'answer' ? s.answer : target === 'section' ? s.section : s.document;
}
