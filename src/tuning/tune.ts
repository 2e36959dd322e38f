import { RETRIEVE_DEFAULTS } from '../retrieval/defaults';
import { DomainError, ErrorCode } from '../errors';
import { DEFAULT_MODE, MODES, type RetrievalMode } from '../retrieval/modes';
import { resolveRanking, type Ranking, type RankingLayer } from '../retrieval/parameters';
import { corpusSettingsOf } from '../retrieval/settings';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { coverage } from '../store/coverage';
import { exclusively } from '../store/exclusive';
import { currentSettings } from '../store/retrieval-settings';
import { budgetPlan, budgetPoints, searchBudget, type BudgetSearch } from './budget';
import { chooseSettings, lowersDense, type Choice } from './choose';
import { pseudoQuestions, QUESTIONS_PER_KIND, type PseudoKind, type PseudoQuestion } from './pseudo-questions';
import { scorePoint, type PointScore } from './score';

export type { PointScore } from './score';

/**
 * `dhr tune`: the corpus chooses its own ranking parameters. Pseudo-questions from
 * the corpus (pseudo-questions.ts) are run through `retrieve` as the server runs them (HNSW and
 * bounded BM25, not exact search) at each point of a small grid around the mode's defaults, and
 * each point is scored by MRR@k2 of the questions' gold; choose.ts decides whether a point beats
 * the settings in force by enough to replace them. HYBRID_HIERARCHICAL then gets stage 2's
 * passage budget chosen for that point (budget.ts), by a rule of its own: the smallest that loses
 * nothing.
 */

/** The grid, per parameter: small on purpose (few questions cannot tell finer steps apart). */
export const TUNE_GRID = {
  lambda: [0, 0.25, 0.5, 1, 2],
  alpha: [0.1, 0.3, 0.5, 0.7],
  documentAlpha: [0.3, 0.6, 0.9],
  perDocument: [null, 1, 3],
  /**
   * The soft form of the bound: a document's n-th best passage loses (n − 1)·d. From none through
   * the default's 0.01 to 0.3, where a document's second passage rarely ranks above another
   * document's best (on the Python docs' dev split the decay still gained at 0.1: docs/eval).
   */
  perDocumentDecay: [0, 0.01, 0.03, 0.1, 0.3],
  /** Question → document linking by title: off, or the boost that puts a named document first (HYBRID_HIERARCHICAL). */
  titleLink: [0, 1],
  /** With a confirmed link, the weight of the question without its names in stage 2's dense side: off, or the default's even mix. */
  titleLinkDense: [0, 0.5],
} as const;

export interface TuneOptions {
  mode?: RetrievalMode;
  /** Pseudo-questions of each kind (default 40). */
  perKind?: number;
  seed?: number;
  kinds?: readonly PseudoKind[];
  /** Labelled questions the user gives (a question file), run beside the pseudo-questions. */
  labelled?: PseudoQuestion[];
  k1?: number;
  k2?: number;
  /** The server's environment (HYBRID_ALPHA, PER_DOCUMENT) and BM25 settings, as a question would see them. */
  environment?: RankingLayer;
  bm25?: Partial<Bm25Settings>;
  /** After each point: how many points are done of how many. */
  onProgress?: (done: number, total: number, label: string) => void;
  /** Stage 2's size from which passage budgets are tried (default BUDGET_FROM_PASSAGES). */
  budgetFromPassages?: number;
  /**
   * Also score the grid's points that lower a dense weight, which the chooser never takes
   * (lowersDense): `dhr eval --tune-gap` judges them against labels. Off, the tune skips them
   * (11 of the default mode's 37 points).
   */
  scoreLowerDense?: boolean;
}

export interface TuneReport {
  mode: RetrievalMode;
  questions: Record<PseudoKind | 'labelled', number>;
  /** The settings in force when the tune ran, the mode's built-in defaults, and the baselines. */
  current: PointScore;
  defaults: PointScore;
  lexical: PointScore;
  hybrid: PointScore;
  grid: PointScore[];
  choice: Choice;
  /** HYBRID_HIERARCHICAL: stage 2's passage budget for the chosen point (budget.ts). */
  passageBudget?: BudgetSearch;
  /** The tune's wall time, from drawing the questions to the budget's choice, and the points it ran (a point reached twice runs once). */
  seconds: number;
  pointsRun: number;
}

/** Questions below which the tune refuses: too few to tell points apart. */
export const MIN_TUNE_QUESTIONS = 30;

/** One tune of a store at a time: a second is refused with CONFLICT (two would write two versions from one). */
export function tune(db: Database, targets: EmbeddingTargets, o: TuneOptions = {}): Promise<TuneReport> {
  return exclusively(db, 'tune', 'a tune of the retrieval settings', () => tuneAlone(db, targets, o));
}

async function tuneAlone(db: Database, targets: EmbeddingTargets, o: TuneOptions): Promise<TuneReport> {
  const started = Date.now();
  const mode = o.mode ?? DEFAULT_MODE;
  const spec = MODES[mode];
  if (!spec.usesAlpha && !spec.usesLambda)
    throw new DomainError(ErrorCode.BAD_USER_INPUT, `mode ${mode} has no weights to tune (only the hierarchical and hybrid modes do)`, { argument: 'mode' });
  const { passages } = await coverage(db, { document: targets.document.id, passage: targets.passage.id });
  if (passages.total === 0)
    throw new DomainError(ErrorCode.BAD_USER_INPUT, 'the store holds no passages: ingest a corpus before tuning it', { argument: 'corpus' });
  if ((spec.needs.passageVector || spec.needs.documentVector) && passages.embedded === 0) {
    throw new DomainError(ErrorCode.BAD_USER_INPUT, `no passage has a vector of ${targets.passage.name} yet: embed the corpus (dhr embed) before tuning it`, {
      argument: 'corpus',
    });
  }
  const seed = o.seed ?? 0;
  const mined = await pseudoQuestions(db, { perKind: o.perKind ?? QUESTIONS_PER_KIND.default, seed, kinds: o.kinds });
  const questions = [...mined.questions, ...(o.labelled ?? [])];
  if (questions.length < MIN_TUNE_QUESTIONS) {
    throw new DomainError(
      ErrorCode.BAD_USER_INPUT,
      `only ${questions.length} pseudo-questions could be drawn from this corpus (at least ${MIN_TUNE_QUESTIONS} are needed): too few documents, sections of one passage, no links`,
      { argument: 'corpus' },
    );
  }
  const k1 = o.k1 ?? RETRIEVE_DEFAULTS.k1;
  const k2 = o.k2 ?? RETRIEVE_DEFAULTS.k2;
  const environment = o.environment ?? {};
  const corpus = corpusSettingsOf(await currentSettings(db));
  const inForce = resolveRanking(spec.defaults, { corpus: corpus[mode], environment }).values;
  const builtIn = resolveRanking(spec.defaults, {}).values;

  const points = gridPoints(mode, inForce).filter((p) => o.scoreLowerDense || lowersDense(p.values, inForce).length === 0);
  const plan = mode === 'HYBRID_HIERARCHICAL' ? await budgetPlan(db, k1, o.budgetFromPassages) : undefined;
  const baselines = [
    { label: 'in force', mode, values: inForce },
    { label: 'defaults', mode, values: builtIn },
    { label: 'LEXICAL', mode: 'LEXICAL' as const, values: resolveRanking(MODES.LEXICAL.defaults, {}).values },
    { label: 'HYBRID', mode: 'HYBRID' as const, values: resolveRanking(MODES.HYBRID.defaults, {}).values },
  ];
  // A point reached twice (the settings in force are the built-in defaults on a corpus with no
  // settings, and are on the grid) runs once: same statements, same questions, same ranks.
  const statements = new Set([...baselines.map((b) => pointKey(b.mode, b.values)), ...points.map((p) => pointKey(mode, p.values))]);
  const total = statements.size + (plan ? budgetPoints(plan) : 0);
  let done = 0;
  const scored = new Map<string, PointScore>();
  const run = async (label: string, runMode: RetrievalMode, values: Ranking): Promise<PointScore> => {
    const key = pointKey(runMode, values);
    const same = scored.get(key);
    if (same) return { ...same, label };
    const score = await scorePoint(db, targets, questions, { label, mode: runMode, values, k1, k2, bm25: o.bm25 });
    scored.set(key, score);
    o.onProgress?.(++done, total, label);
    return score;
  };
  const base: PointScore[] = [];
  for (const b of baselines) base.push(await run(b.label, b.mode, b.values));
  const [current, defaults, lexical, hybrid] = base;
  const grid: PointScore[] = [];
  for (const p of points) grid.push(await run(p.label, mode, p.values));
  const questionCounts = { ...mined.counts, labelled: o.labelled?.length ?? 0 };
  const choice = chooseSettings({ current, defaults, lexical, grid, kinds: questions.map((q) => q.kind) });
  const passageBudget = plan
    ? await searchBudget(db, targets, questions, plan, {
        values: choice.chosen.values,
        k1,
        k2,
        bm25: o.bm25,
        onPoint: (label) => o.onProgress?.(++done, total, label),
      })
    : undefined;
  return {
    mode,
    questions: questionCounts,
    current,
    defaults,
    lexical,
    hybrid,
    grid,
    choice,
    passageBudget,
    seconds: (Date.now() - started) / 1000,
    pointsRun: done,
  };
}

/**
 * The points: λ × alpha (as the mode uses them), each with the document stage's alpha, title
 * links and the question without its names, the bound on passages per document and its soft form,
 * the per-document decay, varied alone around the settings in force. Not a full product:
 * 5 × 4 + 3 + 2 + 2 + 3 + 5 points (fewer where one is the settings in force, and fewer again
 * once those that lower a dense weight are left out) keep a tune of the demo corpus within minutes.
 */
function gridPoints(mode: RetrievalMode, inForce: Ranking): { label: string; values: Ranking }[] {
  const spec = MODES[mode];
  const out: { label: string; values: Ranking }[] = [];
  const lambdas = spec.usesLambda ? TUNE_GRID.lambda : [inForce.lambda];
  const alphas = spec.usesAlpha ? TUNE_GRID.alpha : [inForce.alpha];
  for (const lambda of lambdas) {
    for (const alpha of alphas) {
      const values = { ...inForce, lambda, alpha, documentAlpha: inForce.documentAlpha };
      out.push({ label: describe(mode, values), values });
    }
  }
  if (mode === 'HYBRID_HIERARCHICAL') {
    for (const documentAlpha of TUNE_GRID.documentAlpha) {
      const values = { ...inForce, documentAlpha };
      out.push({ label: describe(mode, values), values });
    }
    for (const titleLink of TUNE_GRID.titleLink) {
      const values = { ...inForce, titleLink };
      out.push({ label: describe(mode, values), values });
    }
    for (const titleLinkDense of TUNE_GRID.titleLinkDense) {
      const values = { ...inForce, titleLinkDense };
      out.push({ label: describe(mode, values), values });
    }
  }
  if (!spec.documentsOnly) {
    for (const perDocument of TUNE_GRID.perDocument) {
      const values = { ...inForce, perDocument };
      out.push({ label: describe(mode, values), values });
    }
    for (const perDocumentDecay of TUNE_GRID.perDocumentDecay) {
      const values = { ...inForce, perDocumentDecay };
      out.push({ label: describe(mode, values), values });
    }
  }
  // The same point reached twice (a value in force that is on the grid) runs once.
  const seen = new Set<string>();
  return out.filter((p) => !seen.has(p.label) && seen.add(p.label));
}

/** A point's identity: its mode and every ranking value (in name order, so the values' order does not matter). */
const pointKey = (mode: RetrievalMode, values: Ranking) => JSON.stringify([mode, Object.entries(values).sort(([a], [b]) => a.localeCompare(b))]);

export function describe(mode: RetrievalMode, v: Ranking): string {
  const spec = MODES[mode];
  const parts = [
    spec.usesLambda ? `λ ${v.lambda}` : '',
    spec.usesAlpha ? `α ${v.alpha}` : '',
    mode === 'HYBRID_HIERARCHICAL' ? `document α ${v.documentAlpha}` : '',
    mode === 'HYBRID_HIERARCHICAL' ? `title links ${v.titleLink}` : '',
    mode === 'HYBRID_HIERARCHICAL' && v.titleLink > 0 ? `without names ${v.titleLinkDense}` : '',
    `per document ${v.perDocument ?? 'any'}`,
    spec.documentsOnly ? '' : `decay ${v.perDocumentDecay}`,
  ];
  return parts.filter(Boolean).join(', ');
}
