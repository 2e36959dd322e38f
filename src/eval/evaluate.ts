/**
 * The evaluation protocol: λ tuned on the dev split (HIERARCHICAL, DHR §5.3), then every mode on
 * the test split at that λ, a k1 sweep on the test split, and failure examples.
 */
import { RETRIEVAL_MODES, type RetrievalMode } from '../retrieval/modes';
import { runQuestions, type Corpus, type QuestionOutcome, type RunParams } from './run';
import { scoreOutcomes, targetRank, targetScores, type Scores, type Target } from './scores';
import { splitOf } from './split';
import { bestLambda, coarseGrid, fineGrid, type LambdaPoint } from './sweep';
import type { EvalDataset, EvalQuestion } from './types';

export interface EvalSettings {
  /** k1 for the mode comparison and the λ sweep (the API default). */
  k1: number;
  /** Passages retrieved: the largest k reported. */
  k2: number;
  k1Sweep: number[];
  log: (line: string) => void;
}

export interface FailureExample {
  question: string;
  gold: string[];
  /** Rank of the judged target per mode (null: not in the top k2). */
  ranks: Partial<Record<RetrievalMode, number | null>>;
  /** HIERARCHICAL's first results. */
  hierarchicalTop: string[];
  /** The first result of the mode that found it. */
  foundBy?: { mode: RetrievalMode; result: string };
}

export interface EvalOutcome {
  target: Target;
  split: { dev: number; test: number };
  lambdaSweep: LambdaPoint[];
  lambda: number;
  /** Test-split scores per mode at the chosen λ. */
  modes: Partial<Record<RetrievalMode, Scores>>;
  /** The same at λ = 1 for the λ-dependent modes, to show what tuning bought. */
  modesAtLambda1: Partial<Record<RetrievalMode, Scores>>;
  k1Sweep: Array<{ k1: number; scores: Scores }>;
  losses: FailureExample[];
  wins: FailureExample[];
}

/** The modes whose ranking depends on λ. */
const FUSED: RetrievalMode[] = ['HIERARCHICAL', 'PARALLEL', 'HYBRID'];

const describe = (r: { documentKey: string; titlePath: string[]; text: string }): string => {
  const where = r.titlePath.length > 0 ? r.titlePath.join(' › ') : r.documentKey;
  return r.text ? `${where}: ${r.text.slice(0, 140)}${r.text.length > 140 ? '…' : ''}` : where;
};

function goldOf(q: EvalQuestion, target: Target): string[] {
  if (target === 'answer') return q.answers ?? [];
  if (target === 'section') return q.goldSections.map((s) => `${s.document} › ${s.path.join(' › ')}`);
  return q.goldDocuments;
}

export async function evaluate(dataset: EvalDataset, corpus: Corpus, settings: EvalSettings): Promise<EvalOutcome> {
  const target: Target = dataset.questions.some((q) => q.answers) ? 'answer' : 'document';
  const dev = dataset.questions.filter((q) => splitOf(q.id) === 'dev');
  const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');
  const { log } = settings;
  log(`questions: ${dev.length} dev, ${test.length} test; judged by ${target} Top-20`);
  const params = (mode: RetrievalMode, lambda: number, k1 = settings.k1): RunParams => ({ mode, k1, k2: settings.k2, lambda });

  // λ on the dev split.
  const sweep: LambdaPoint[] = [];
  const tried = new Set<number>();
  const tryLambdas = async (lambdas: number[], phase: LambdaPoint['phase']) => {
    for (const lambda of lambdas) {
      if (tried.has(lambda)) continue;
      tried.add(lambda);
      const scores = targetScores(scoreOutcomes(await runQuestions(corpus, dev, params('HIERARCHICAL', lambda))), target)!;
      sweep.push({ lambda, phase, top20: scores.top['20'], mrr20: scores.mrr20 });
    }
  };
  await tryLambdas(coarseGrid(), 'coarse');
  const coarse = bestLambda(sweep);
  log(`λ coarse: best ${coarse.lambda} (Top-20 ${coarse.top20}, MRR@20 ${coarse.mrr20})`);
  await tryLambdas(fineGrid(coarse.lambda), 'fine');
  const chosen = bestLambda(sweep);
  log(`λ fine: chose ${chosen.lambda} (Top-20 ${chosen.top20}, MRR@20 ${chosen.mrr20})`);
  sweep.sort((a, b) => a.lambda - b.lambda);

  // Every mode on the test split.
  const byMode = new Map<RetrievalMode, QuestionOutcome[]>();
  const modes: EvalOutcome['modes'] = {};
  for (const mode of RETRIEVAL_MODES) {
    const outcomes = await runQuestions(corpus, test, params(mode, chosen.lambda));
    byMode.set(mode, outcomes);
    modes[mode] = scoreOutcomes(outcomes);
    const s = targetScores(modes[mode]!, mode === 'DOCUMENTS' ? 'document' : target);
    log(`  ${mode}: Top-1/5/20/100 ${KS_TEXT(s?.top)}, p50 ${modes[mode]!.latencyMs.p50.toFixed(1)} ms`);
  }
  const modesAtLambda1: EvalOutcome['modesAtLambda1'] = {};
  for (const mode of FUSED) {
    modesAtLambda1[mode] = chosen.lambda === 1 ? modes[mode] : scoreOutcomes(await runQuestions(corpus, test, params(mode, 1)));
  }

  // k1 on the test split, at the chosen λ (reported, not used for any choice).
  const k1Sweep: EvalOutcome['k1Sweep'] = [];
  for (const k1 of settings.k1Sweep) {
    const scores = k1 === settings.k1 ? modes.HIERARCHICAL! : scoreOutcomes(await runQuestions(corpus, test, params('HIERARCHICAL', chosen.lambda, k1)));
    k1Sweep.push({ k1, scores });
    log(`  k1 = ${k1}: Top-20 ${targetScores(scores, target)?.top['20']}`);
  }

  // Failure examples: where HIERARCHICAL misses the top 20 and FLAT or LEXICAL does not, and the reverse.
  const rankIn = (mode: RetrievalMode, i: number) => targetRank(byMode.get(mode)![i], target) ?? null;
  const within20 = (r: number | null) => r !== null && r <= 20;
  const example = (i: number, foundBy?: RetrievalMode): FailureExample => ({
    question: test[i].question,
    gold: goldOf(test[i], target),
    ranks: Object.fromEntries((['HIERARCHICAL', 'FLAT', 'LEXICAL', 'HYBRID'] as RetrievalMode[]).map((m) => [m, rankIn(m, i)])),
    hierarchicalTop: byMode.get('HIERARCHICAL')![i].top.map(describe),
    ...(foundBy ? { foundBy: { mode: foundBy, result: describe(byMode.get(foundBy)![i].hits[target] ?? byMode.get(foundBy)![i].top[0]) } } : {}),
  });
  const losses: FailureExample[] = [];
  const wins: FailureExample[] = [];
  test.forEach((_, i) => {
    const h = rankIn('HIERARCHICAL', i);
    const other = (['FLAT', 'LEXICAL'] as RetrievalMode[]).find((m) => within20(rankIn(m, i)));
    if (!within20(h) && other && losses.length < 5) losses.push(example(i, other));
    if (within20(h) && !within20(rankIn('FLAT', i)) && !within20(rankIn('LEXICAL', i)) && wins.length < 3) wins.push(example(i));
  });
  // When nothing else found what HIERARCHICAL missed, show plain misses instead.
  if (losses.length === 0) {
    test.forEach((_, i) => {
      if (!within20(rankIn('HIERARCHICAL', i)) && losses.length < 5) losses.push(example(i));
    });
  }
  return { target, split: { dev: dev.length, test: test.length }, lambdaSweep: sweep, lambda: chosen.lambda, modes, modesAtLambda1, k1Sweep, losses, wins };
}

const KS_TEXT = (top: Record<string, number> | undefined) => (top ? ['1', '5', '20', '100'].map((k) => top[k].toFixed(3)).join('/') : 'n/a');

