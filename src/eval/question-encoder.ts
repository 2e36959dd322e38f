/**
 * A fine-tuned question encoder in the evaluation (`training/` exports one as a
 * custom-model folder). The folder serves the question→passage role (or both question roles);
 * passages and documents keep the corpus's stored vectors, as serving it would: no re-embedding.
 * Scored on the test split for the adapter runs' modes, beside the evaluation's own scores.
 */
import { basename } from 'node:path';
import { loadEncoder, EncoderSet } from '../encoders/set';
import type { EncoderRole } from '../encoders/types';
import type { RetrievalMode } from '../retrieval/modes';
import { ADAPTER_MODES } from './adapters';
import type { EvalOutcome } from './evaluate';
import { runQuestions, type Corpus } from './run';
import { scoreOutcomes, targetScores, type Scores, type Target } from './scores';
import { splitOf } from './split';
import type { EvalDataset } from './types';

export type QuestionRoles = Extract<EncoderRole, 'questionPassage' | 'questionDocument'>;

export interface QuestionEncoderEvaluation {
  target: Target;
  /** The folder's name (the model's own name is in its dhr-model.json), and the roles it served. */
  folder: string;
  model: string;
  roles: QuestionRoles[];
  testQuestions: number;
  /** none: the evaluation's own scores (same parameters); tuned: with the folder's question vectors. */
  scores: Partial<Record<RetrievalMode, { none: Scores; tuned: Scores }>>;
  seconds: number;
}

export async function evaluateQuestionEncoder(
  dataset: EvalDataset,
  corpus: Corpus,
  outcome: Pick<EvalOutcome, 'target' | 'modeParams' | 'modes'>,
  folder: string,
  options: { roles: QuestionRoles[]; threads?: number; log: (line: string) => void },
): Promise<QuestionEncoderEvaluation> {
  const started = process.hrtime.bigint();
  const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');
  const encoder = await loadEncoder(folder, { threads: options.threads });
  try {
    const byRole = { ...corpus.targets.encoders.byRole };
    for (const role of options.roles) byRole[role] = encoder;
    // EncoderSet.of refuses a question model whose dimension is not its target's.
    const targets = { ...corpus.targets, encoders: EncoderSet.of(byRole) };
    const scores: QuestionEncoderEvaluation['scores'] = {};
    for (const mode of ADAPTER_MODES) {
      const params = outcome.modeParams[mode];
      const none = outcome.modes[mode];
      if (!params || !none) continue;
      const tuned = scoreOutcomes(await runQuestions({ ...corpus, targets }, test, { mode, ...params }));
      scores[mode] = { none, tuned };
      const t = targetScores(tuned, outcome.target);
      options.log(`question encoder ${encoder.name}: ${mode} Top-1/5/20 ${t ? ['1', '5', '20'].map((k) => t.top[k].toFixed(3)).join('/') : 'n/a'}`);
    }
    return {
      target: outcome.target,
      folder: basename(folder),
      model: encoder.name,
      roles: options.roles,
      testQuestions: test.length,
      scores,
      seconds: Math.round(Number(process.hrtime.bigint() - started) / 1e8) / 10,
    };
  } finally {
    await encoder.close();
  }
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The report's section: Top-1/5/20 without and with the folder, and the Top-20 difference. */
export function questionEncoderSection(e: QuestionEncoderEvaluation): string {
  const rows = Object.entries(e.scores).map(([mode, s]) => {
    const none = targetScores(s!.none, e.target);
    const tuned = targetScores(s!.tuned, e.target);
    if (!none || !tuned) return `| ${mode} | – | – | – |`;
    const d = 100 * (tuned.top['20'] - none.top['20']);
    return `| ${mode} | ${['1', '5', '20'].map((k) => pct(none.top[k])).join(' / ')} | ${['1', '5', '20'].map((k) => pct(tuned.top[k])).join(' / ')} | ${d >= 0 ? '+' : ''}${d.toFixed(1)} |`;
  });
  return `## Fine-tuned question encoder (test split)

The custom-model folder \`${e.folder}\` (model "${e.model}", from \`training/\`) serves ${e.roles.join(' and ')}; passages and documents keep the corpus's stored vectors. ${e.target} Top-k on the ${e.testQuestions} test questions, percentages; none is the table above. Runs took ${e.seconds} s.

| mode | none Top-1 / 5 / 20 | fine-tuned Top-1 / 5 / 20 | Δ20 |
| --- | --- | --- | ---: |
${rows.join('\n')}

`;
}
