import { DEFAULT_MODE } from '../retrieval/modes';
import { tune, type TuneReport } from '../tuning/tune';
import type { EvalOutcome } from './evaluate';
import { runQuestions, type Corpus, type RunParams } from './run';
import { scoreOutcomes, type Scores } from './scores';
import { splitOf } from './split';
import type { EvalDataset } from './types';

/**
 * Issue 31 §4 (b): the default mode at the settings `dhr tune` chooses on the set's corpus alone,
 * with no labelled question, scored on the test split beside the global defaults (a) and the
 * settings tuned on the dev questions (c, the report's dev-best row).
 */
export interface SelfTunedEvaluation {
  /** The tune's own record: its questions, the chosen point and whether it replaced the defaults. */
  tune: { questions: TuneReport['questions']; chosen: string; change: boolean; reason: string; margin: number; standardError: number; pseudoMrr: { chosen: number; defaults: number; lexical: number; hybrid: number }; seconds: number };
  params: Omit<RunParams, 'mode'>;
  scores: Scores;
}

export async function evaluateSelfTuned(
  dataset: EvalDataset,
  corpus: Corpus,
  outcome: EvalOutcome,
  o: { perKind: number; seed: number; k1: number; k2: number; log: (line: string) => void },
): Promise<SelfTunedEvaluation> {
  const started = process.hrtime.bigint();
  let last = 0;
  const report = await tune(corpus.db, corpus.targets, {
    perKind: o.perKind,
    seed: o.seed,
    onProgress: (done, total, label) => {
      if (done === total || Date.now() - last > 30_000) {
        last = Date.now();
        o.log(`self-tune: ${done}/${total} points (${label})`);
      }
    },
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const chosen = report.choice.chosen;
  o.log(`self-tune: ${report.choice.change ? 'chose' : 'kept'} ${chosen.label} in ${seconds.toFixed(0)} s: ${report.choice.reason}`);
  const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');
  const params: Omit<RunParams, 'mode'> = { ...outcome.modeParams[DEFAULT_MODE]!, k1: o.k1, k2: o.k2, ...chosen.values };
  const scores = scoreOutcomes(await runQuestions(corpus, test, { mode: DEFAULT_MODE, ...params }));
  return {
    tune: {
      questions: report.questions,
      chosen: chosen.label,
      change: report.choice.change,
      reason: report.choice.reason,
      margin: report.choice.margin,
      standardError: report.choice.standardError,
      pseudoMrr: { chosen: chosen.mrr, defaults: report.defaults.mrr, lexical: report.lexical.mrr, hybrid: report.hybrid.mrr },
      seconds,
    },
    params,
    scores,
  };
}
