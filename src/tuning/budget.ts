import type { Ranking } from '../retrieval/parameters';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { coverage } from '../store/coverage';
import { chooseBudget, type BudgetChoice } from './choose';
import type { PseudoQuestion } from './pseudo-questions';
import { scorePoint, type PointScore } from './score';

/**
 * Stage 2's passage budget, chosen by the corpus (HYBRID_HIERARCHICAL). A budget is a speed knob,
 * so it is judged as one: the smallest that loses nothing against none on the tune's questions
 * (chooseBudget), never the one that scores best. The budgets tried are fractions of what stage 2
 * scores without one (k1 documents × the corpus's passages a document), so they bind on any
 * corpus; a corpus whose stage 2 is small gets none tried (there is little to save).
 */

/** The budgets tried, as fractions of stage 2's passages without one. */
export const BUDGET_FRACTIONS = [1 / 16, 1 / 8, 1 / 4, 1 / 2] as const;
/** Below this many passages a question in stage 2, no budget is tried. */
export const BUDGET_FROM_PASSAGES = 1000;
/**
 * The depth a budget is judged at: its recall there must not fall. On the Python docs' dev split
 * every budget tried kept Top-1/5/20 and lost recall@100 (docs/eval/README.md).
 */
export const BUDGET_RECALL_DEPTH = 100;

export interface BudgetSearch extends BudgetChoice {
  /** Passages stage 2 scores a question without a budget (estimated: k1, at most every document, × passages a document). */
  stage2Passages: number;
  /** The point without a budget first, then each budget tried, smallest first (empty when none was tried). */
  points: PointScore[];
}

/** Two significant digits: budgets a person can read and type (7,950 → 8,000). */
export function roundBudget(x: number): number {
  if (x < 10) return Math.max(1, Math.round(x));
  const step = 10 ** (Math.floor(Math.log10(x)) - 1);
  return Math.round(x / step) * step;
}

/** The budgets to try for a stage 2 of this many passages, smallest first, each below it. */
export function budgetLadder(stage2Passages: number): number[] {
  const out = BUDGET_FRACTIONS.map((f) => roundBudget(stage2Passages * f)).filter((b) => b < stage2Passages);
  return [...new Set(out)].sort((a, b) => a - b);
}

/** What a budget search will run: stage 2's size without a budget, and the budgets to try (none when it is small). */
export async function budgetPlan(
  db: Database,
  k1: number,
  fromPassages = BUDGET_FROM_PASSAGES,
): Promise<{ stage2Passages: number; ladder: number[]; from: number }> {
  const { documents, passages } = await coverage(db, {});
  const stage2Passages = Math.round(Math.min(k1, documents.total) * (passages.total / Math.max(1, documents.total)));
  return { stage2Passages, ladder: stage2Passages < fromPassages ? [] : budgetLadder(stage2Passages), from: fromPassages };
}

/** Points run: none and each budget of the plan (0 when the plan tries none). */
export const budgetPoints = (plan: { ladder: number[] }) => (plan.ladder.length === 0 ? 0 : plan.ladder.length + 1);

export async function searchBudget(
  db: Database,
  targets: EmbeddingTargets,
  questions: readonly PseudoQuestion[],
  plan: { stage2Passages: number; ladder: number[]; from: number },
  o: {
    /** The point the budget is added to (the tune's choice). */
    values: Ranking;
    k1: number;
    k2: number;
    bm25?: Partial<Bm25Settings>;
    onPoint?: (label: string) => void;
  },
): Promise<BudgetSearch> {
  const { stage2Passages } = plan;
  if (plan.ladder.length === 0) {
    return {
      stage2Passages,
      points: [],
      chosen: null,
      reason: `stage 2 scores about ${stage2Passages} passages a question, under the ${plan.from} worth a budget: none tried`,
    };
  }
  const run = async (passageBudget: number | null) => {
    const label = `passageBudget ${passageBudget ?? 'none'}`;
    const point = await scorePoint(db, targets, questions, {
      label,
      mode: 'HYBRID_HIERARCHICAL',
      values: { ...o.values, passageBudget },
      k1: o.k1,
      k2: o.k2,
      depth: BUDGET_RECALL_DEPTH,
      bm25: o.bm25,
    });
    o.onPoint?.(label);
    return point;
  };
  const none = await run(null);
  const tried: PointScore[] = [];
  for (const budget of plan.ladder) tried.push(await run(budget));
  return { stage2Passages, points: [none, ...tried], ...chooseBudget(none, tried, { k2: o.k2, depth: BUDGET_RECALL_DEPTH }) };
}
