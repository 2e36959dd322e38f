/**
 * `dhr eval --tune-gap`: how close the label-free tune comes to what labels would choose. The tune
 * (`dhr tune`) runs on the set's corpus alone, with its pseudo-questions; then every point it tried
 * is scored on one split's labelled questions (the labelled sweep over the same grid), beside BM25,
 * the built-in defaults and the tune's choice (what `--apply` would store). The gap is the best
 * labelled point's Top-5 less the tuned point's: what a better judge of points could still gain.
 */
import { DEFAULT_MODE, MODES, modeDefaults, type RetrievalMode } from '../retrieval/modes';
import { resolveRanking, type Ranking } from '../retrieval/parameters';
import type { PseudoKind } from '../tuning/pseudo-questions';
import { searchedBudget } from '../tuning/runs';
import type { PointScore } from '../tuning/score';
import { pointTarget, scoreOutcomes, type PointRow, type PointTarget } from './points';
import { runQuestions, type Corpus, type RunParams } from './run';
import { tuneCorpus } from './self-tuned';
import { splitOf, type Split } from './split';
import type { EvalDataset } from './types';

export interface TuneGap {
  split: Split;
  questions: number;
  target: PointTarget;
  lexical: PointRow;
  defaults: PointRow;
  tuned: PointRow & { changed: boolean; reason: string };
  /** Every point the tune tried, scored on the split's labels, best first (Top-5, then Top-1, Top-20), with what the pseudo-questions said of it. */
  labelled: (PointRow & { pseudo: Pick<PointScore, 'mrr' | 'byKind'>; bound: Bound })[];
  /** Per source of pseudo-questions: the point it alone would choose, and how well its MRR orders the points as the labels' Top-5 does. */
  kinds: KindVerdict[];
  /** Best labelled Top-5 less the tuned Top-5 (points). */
  gap: number;
  /**
   * The same over the points with the tuned point's bound per document, hard and soft: the points
   * the tune can judge. Its pseudo-questions are judged by passage, and a set judged by document
   * gains from a bound of one or a larger decay whatever the corpus (a document's best passage
   * keeps its score while the others' further passages lose), so the bound is a choice of what to
   * show (docs/tuning.md), not a ranking a corpus can choose.
   */
  gapSameBound: number;
  tuneSeconds: number;
}

/** What one source of pseudo-questions says of the grid, against the labels. */
export interface KindVerdict {
  kind: PseudoKind | 'all';
  questions: number;
  /** The grid point with this source's best MRR, and that point's labelled Top-5. */
  choice: string;
  choiceTop5: number;
  /** Spearman's rank correlation of this source's MRR with the labelled Top-5, over the grid's points. */
  spearman: number;
}

/** The bound on passages per document, in its hard form and its soft one (the decay). */
type Bound = Pick<Ranking, 'perDocument' | 'perDocumentDecay'>;
const boundOf = (v: Bound): Bound => ({ perDocument: v.perDocument, perDocumentDecay: v.perDocumentDecay });
export const sameBound = (a: Bound, b: Bound): boolean => a.perDocument === b.perDocument && a.perDocumentDecay === b.perDocumentDecay;

const byTop5 = (a: PointRow, b: PointRow) => b.top['5'] - a.top['5'] || b.top['1'] - a.top['1'] || b.top['20'] - a.top['20'];

/** The ranking values that differ from the built-in defaults, as a --points object would give them. */
function label(mode: RetrievalMode, values: Partial<Ranking> & { passageBudget?: number | null }): string {
  const builtIn = resolveRanking(MODES[mode].defaults, {}).values as unknown as Record<string, unknown>;
  const changed = Object.entries(values).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(builtIn[k]));
  return JSON.stringify(Object.fromEntries(changed));
}

export async function tuneGap(
  dataset: EvalDataset,
  corpus: Corpus,
  split: Split,
  o: { k1: number; k2: number; perKind: number; seed: number; log: (line: string) => void },
): Promise<TuneGap> {
  const target = pointTarget(dataset);
  const questions = dataset.questions.filter((q) => splitOf(q.id) === split);
  const score = async (name: string, params: RunParams) => scoreOutcomes(name, await runQuestions(corpus, questions, params), target);
  const at = (mode: RetrievalMode, values: Partial<Ranking> & { passageBudget?: number | null }): RunParams =>
    ({ ...modeDefaults(mode), ...values, mode, k1: o.k1, k2: o.k2 }) as RunParams;

  const { report, seconds: tuneSeconds } = await tuneCorpus(corpus, { ...o, prefix: 'tune-gap: the tune', scoreLowerDense: true });
  const chosen = report.choice.chosen;
  const budget = searchedBudget(report);
  const tunedValues = { ...chosen.values, ...(budget !== undefined ? { passageBudget: budget } : {}) };
  o.log(
    `tune-gap: the tune ${report.choice.change ? 'chose' : 'kept'} ${label(DEFAULT_MODE, tunedValues)} in ${tuneSeconds.toFixed(0)} s (${report.choice.reason})`,
  );

  const lexical = await score('LEXICAL', at('LEXICAL', {}));
  const defaults = await score('defaults', at(DEFAULT_MODE, {}));
  const tunedRow = await score(`tuned ${label(DEFAULT_MODE, tunedValues)}`, at(DEFAULT_MODE, tunedValues));
  const labelled: TuneGap['labelled'] = [];
  for (const point of report.grid) {
    const name = label(point.mode, point.values);
    o.log(`tune-gap: ${split} split at ${name}`);
    labelled.push({
      ...(await score(name, at(point.mode, point.values))),
      pseudo: { mrr: point.mrr, byKind: point.byKind },
      bound: boundOf(point.values),
    });
  }
  labelled.sort(byTop5);
  const kinds = kindVerdicts(labelled);
  const best = labelled[0] ?? tunedRow;
  const bestSameBound = labelled.find((r) => sameBound(r.bound, chosen.values)) ?? tunedRow;
  const gapOf = (r: PointRow) => Math.round(10 * (r.top['5'] - tunedRow.top['5'])) / 10;
  return {
    split,
    questions: questions.length,
    target,
    lexical,
    defaults,
    tuned: { ...tunedRow, changed: report.choice.change || budget !== undefined, reason: report.choice.reason },
    labelled,
    kinds,
    gap: gapOf(best),
    gapSameBound: gapOf(bestSameBound),
    tuneSeconds,
  };
}

/** Each source of pseudo-questions (and all of them together, as the tune reads them) judged by the labels. */
export function kindVerdicts(rows: TuneGap['labelled']): KindVerdict[] {
  const present = [...new Set(rows.flatMap((r) => Object.keys(r.pseudo.byKind)))] as PseudoKind[];
  const verdict = (kind: PseudoKind | 'all', mrrOf: (r: TuneGap['labelled'][number]) => number | undefined): KindVerdict | undefined => {
    const scored = rows.filter((r) => mrrOf(r) !== undefined);
    if (scored.length === 0) return undefined;
    const best = [...scored].sort((a, b) => mrrOf(b)! - mrrOf(a)! || byTop5(a, b))[0];
    return {
      kind,
      questions: kind === 'all' ? 0 : (scored[0].pseudo.byKind[kind as PseudoKind]?.questions ?? 0),
      choice: best.point,
      choiceTop5: best.top['5'],
      spearman: spearman(
        scored.map((r) => mrrOf(r)!),
        scored.map((r) => r.top['5']),
      ),
    };
  };
  return [verdict('all', (r) => r.pseudo.mrr), ...present.map((k) => verdict(k, (r) => r.pseudo.byKind[k]?.mrr))].filter((v): v is KindVerdict => !!v);
}

/** Spearman's ρ with ties given their mean rank (0 when either side is constant). */
export function spearman(a: readonly number[], b: readonly number[]): number {
  const ranks = (x: readonly number[]) => {
    const order = x.map((v, i) => [v, i] as const).sort((p, q) => p[0] - q[0]);
    const r = new Array<number>(x.length);
    for (let i = 0; i < order.length; ) {
      let j = i;
      while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
      for (let k = i; k <= j; k++) r[order[k][1]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const ra = ranks(a);
  const rb = ranks(b);
  const mean = (x: number[]) => x.reduce((s, v) => s + v, 0) / x.length;
  const ma = mean(ra);
  const mb = mean(rb);
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < ra.length; i++) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) ** 2;
    db += (rb[i] - mb) ** 2;
  }
  return da === 0 || db === 0 ? 0 : num / Math.sqrt(da * db);
}

export function tuneGapMarkdown(dataset: EvalDataset, g: TuneGap, command: string): string {
  const f = (n: number | null) => (n === null ? '–' : n.toFixed(1));
  const row = (name: string, r: PointRow) =>
    `| ${name} | \`${r.point}\` | ${f(r.top['1'])} | ${f(r.top['5'])} | ${f(r.top['20'])} | ${f(r.sectionGivenDocument)} |`;
  return [
    `# ${dataset.name}: the label-free tune against a labelled sweep (${g.split} split)`,
    '',
    `${g.questions} questions of the ${g.split} split, judged by ${g.target} Top-k; exact search. The tune ran on the corpus alone (${g.tuneSeconds.toFixed(0)} s): ${g.tuned.reason}. Generated by \`${command}\`.`,
    '',
    `**Gap (best labelled Top-5 − tuned Top-5): ${g.gap.toFixed(1)} points; ${g.gapSameBound.toFixed(1)} over the points with the tuned bound per document (\`perDocument\`, \`perDocumentDecay\`).**`,
    '',
    '| row | point | Top-1 | Top-5 | Top-20 | section first, document first |',
    '|---|---|---:|---:|---:|---:|',
    row('BM25', g.lexical),
    row('defaults', g.defaults),
    row('tuned', g.tuned),
    ...g.labelled.map((r, i) => row(i === 0 ? 'best labelled' : 'grid', r)),
    '',
    "**What each source of pseudo-questions predicts**: the grid point its MRR ranks first, that point's labelled Top-5, and Spearman's ρ between its MRR and the labelled Top-5 over the grid.",
    '',
    '| source | questions | its choice | labelled Top-5 there | ρ |',
    '|---|---:|---|---:|---:|',
    ...g.kinds.map((k) => `| ${k.kind} | ${k.kind === 'all' ? '' : k.questions} | \`${k.choice}\` | ${f(k.choiceTop5)} | ${k.spearman.toFixed(2)} |`),
    '',
  ].join('\n');
}
