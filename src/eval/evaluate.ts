/**
 * The evaluation protocol. On the dev split: λ for HIERARCHICAL (DHR §5.3), alpha then λ for the
 * hybrid modes, BM25's k1 and b, and the summary weight of document BM25F — reported, so the
 * product's defaults can be chosen on dev splits only. On the test split: every mode of the
 * table at the product's defaults (HIERARCHICAL and PARALLEL at the dev λ, as in the paper), the
 * default mode at this set's own dev-best settings, a k1 sweep, and failure examples.
 */
import { DEFAULT_MODE, MODES, RETRIEVAL_MODES, modeDefaults, type ModeSpec, type RetrievalMode } from '../retrieval/modes';
import { DEFAULT_BM25, type Bm25Settings } from '../retrieval/types';
import { measureHighlights, type HighlightScores } from './highlights';
import { runQuestions, type Corpus, type QuestionOutcome, type RunParams } from './run';
import { scoreOutcomes, targetRank, targetScores, type RankScores, type Scores, type Target } from './scores';
import { splitOf } from './split';
import { bestLambda, coarseGrid, fineGrid, type LambdaPoint } from './sweep';
import type { EvalDataset, EvalQuestion } from './types';

export interface EvalSettings {
  /** k1 for the mode comparison and the sweeps (the API default). */
  k1: number;
  /** Passages retrieved: the largest k reported. */
  k2: number;
  k1Sweep: number[];
  log: (line: string) => void;
  /**
   * Dev sweeps from an earlier run on the same corpus (exact search makes them deterministic), so
   * a run after the defaults changed only re-runs the test split; `runEvaluation` checks the match.
   * A sweep the earlier run did not have (one added since) is run.
   */
  reuse?: { lambdaSweep: LambdaPoint[]; sweeps: Sweep[] };
  /**
   * Dev sweeps not to run (and not to report), by a part of their name: for a run that only needs
   * some of them (the top-3/centroid sweep takes hours on Factbook on 2 cores). The passage-stage
   * sweep of the default mode cannot be skipped (the test split's dev-best run needs it).
   */
  skipSweeps?: string[];
}

export interface FailureExample {
  question: string;
  gold: string[];
  /** Rank of the judged target per mode (null: not in the top k2). */
  ranks: Partial<Record<RetrievalMode, number | null>>;
  /** The default mode's first results. */
  defaultTop: string[];
  /** The first result of the mode that found it. */
  foundBy?: { mode: RetrievalMode; result: string };
}

/** One point of a dev sweep: the parameters tried and what they scored. */
export interface SweepPoint {
  params: Record<string, number | string>;
  top: Record<string, number>;
  mrr20: number;
}

export interface Sweep {
  mode: RetrievalMode;
  /** What was varied, and what was judged (target Top-k, or document-stage recall). */
  varied: string;
  judged: string;
  points: SweepPoint[];
  best: SweepPoint;
}

export interface EvalOutcome {
  target: Target;
  split: { dev: number; test: number };
  lambdaSweep: LambdaPoint[];
  /** HIERARCHICAL's λ, chosen on dev. */
  lambda: number;
  /** The dev sweeps of the hybrid and BM25 settings. */
  sweeps: Sweep[];
  /** Test-split scores per mode: product defaults (HIERARCHICAL, PARALLEL at the dev λ). */
  modes: Partial<Record<RetrievalMode, Scores>>;
  /** The parameters each mode ran with on the test split. */
  modeParams: Partial<Record<RetrievalMode, Omit<RunParams, 'mode'>>>;
  /** The default mode on the test split at this set's own dev-best alpha and λ. */
  defaultAtDevBest: { params: Omit<RunParams, 'mode'>; scores: Scores };
  /** The default mode on the test split at this set's dev-best perDocument, when that is a bound. */
  defaultAtDevPerDocument?: { params: Omit<RunParams, 'mode'>; scores: Scores };
  /** The same at λ = 1 for the λ-dependent modes, to show what tuning bought. */
  modesAtLambda1: Partial<Record<RetrievalMode, Scores>>;
  k1Sweep: Array<{ k1: number; scores: Scores }>;
  losses: FailureExample[];
  wins: FailureExample[];
  /** Answer highlights of the default mode's top 5 on the test split (sets with answer strings). */
  highlights?: HighlightScores;
}

const describe = (r: { documentKey: string; titlePath: string[]; text: string }): string => {
  const where = r.titlePath.length > 0 ? r.titlePath.join(' › ') : r.documentKey;
  return r.text ? `${where}: ${r.text.slice(0, 140)}${r.text.length > 140 ? '…' : ''}` : where;
};

function goldOf(q: EvalQuestion, target: Target): string[] {
  if (target === 'answer') return q.answers ?? [];
  if (target === 'section') return q.goldSections.map((s) => `${s.document} › ${s.path.join(' › ')}`);
  return q.goldDocuments;
}

/** What a mode is judged by: document-only modes by their documents, the rest by the set's target. */
export const judged = (s: Scores, mode: RetrievalMode, target: Target): RankScores | null =>
  MODES[mode].documentsOnly ? (target === 'document' ? s.document : null) : targetScores(s, target);

/**
 * Best by MRR@20 (it weighs Top-1 and Top-5, which Top-20 alone ignores), then Top-20, then the
 * earlier point; a document stage by what it hands on (recall at k1 = 100) first. The product's
 * defaults sum the same measures over both sets' dev splits.
 */
function bestPoint(points: SweepPoint[], stage = false): SweepPoint {
  const by = (a: SweepPoint, b: SweepPoint) => b.mrr20 - a.mrr20 || b.top['20'] - a.top['20'];
  return [...points].sort((a, b) => (stage ? b.top['100'] - a.top['100'] : 0) || by(a, b))[0];
}

const ALPHAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
const HYBRID_LAMBDAS = [0, 0.1, 0.25, 0.5, 1];
const PASSAGE_ALPHAS = [0.1, 0.2, 0.3, 0.5];
const SUMMARY_SHARES = [1, 0.5, 0];
const STAGE_ALPHAS = [0.2, 0.4, 0.6];
const SUMMARY_WEIGHTS = [0, 0.5, 1, 2, 3, 5];
const BM25_K1 = [0.9, 1.2, 1.6, 2];
/** Passages per document; k2 itself (no bound) is added as the sweep's baseline. */
const PER_DOCUMENT = [1, 2, 3, 5];
const BM25_B = [0.4, 0.6, 0.75, 0.9];
/** A document's further passages lose this much each (the product's default is chosen from this sweep: modes.ts). */
const PER_DOCUMENT_DECAYS = [0, 0.005, 0.01, 0.015, 0.02, 0.05, 0.1];
/**
 * The sweeps measured before perDocumentDecay existed (alpha × λ, the bound per document, the
 * passage budget) keep running without it, so that a report's reused sweeps and a fresh run's agree.
 */
const NO_DECAY = { perDocumentDecay: 0 } as const;
/** Stage 2's passage budget; none (every passage of the k1 documents) is added as the sweep's baseline. */
const PASSAGE_BUDGETS = [500, 1000, 2000, 4000, 8000];

export async function evaluate(dataset: EvalDataset, corpus: Corpus, settings: EvalSettings): Promise<EvalOutcome> {
  const target: Target = dataset.questions.some((q) => q.answers) ? 'answer' : 'document';
  const dev = dataset.questions.filter((q) => splitOf(q.id) === 'dev');
  const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');
  const { log } = settings;
  log(`questions: ${dev.length} dev, ${test.length} test; judged by ${target} Top-20`);
  // A mode's defaults are a ranking layer, so they are run parameters as they stand.
  const defaults = (mode: RetrievalMode): Omit<RunParams, 'mode'> => ({ k1: settings.k1, k2: settings.k2, ...modeDefaults(mode) });
  const run = (questions: EvalQuestion[], mode: RetrievalMode, over: Partial<RunParams> = {}) =>
    runQuestions(corpus, questions, { mode, ...defaults(mode), ...over });

  const { summaryShare, documentAlpha } = MODES.HYBRID_HIERARCHICAL.defaults;
  const pieces: boolean = (MODES.HYBRID_HIERARCHICAL.defaults as ModeSpec['defaults']).summaryPieces ?? false;
  // The document stage is named in the sweep (a reused report's sweep at another stage is not reused).
  const passageStage = `alpha, λ (document stage: summary share ${summaryShare}, documentAlpha ${documentAlpha}${pieces ? ', several summary vectors' : ''})`;
  if (settings.skipSweeps?.some((part) => passageStage.includes(part))) throw new Error(`the sweep of "${passageStage}" cannot be skipped`);

  // λ for HIERARCHICAL on the dev split, as DHR §5.3.
  const sweep: LambdaPoint[] = [];
  const tried = new Set<number>();
  const tryLambdas = async (lambdas: number[], phase: LambdaPoint['phase']) => {
    for (const lambda of lambdas) {
      if (tried.has(lambda)) continue;
      tried.add(lambda);
      const scores = targetScores(scoreOutcomes(await run(dev, 'HIERARCHICAL', { lambda })), target)!;
      sweep.push({ lambda, phase, top20: scores.top['20'], mrr20: scores.mrr20 });
    }
  };
  if (settings.reuse) sweep.push(...settings.reuse.lambdaSweep);
  else {
    await tryLambdas(coarseGrid(), 'coarse');
    const coarse = bestLambda(sweep);
    log(`HIERARCHICAL λ coarse: best ${coarse.lambda} (Top-20 ${coarse.top20}, MRR@20 ${coarse.mrr20})`);
    await tryLambdas(fineGrid(coarse.lambda), 'fine');
  }
  const chosen = bestLambda(sweep);
  log(`HIERARCHICAL λ fine: chose ${chosen.lambda} (Top-20 ${chosen.top20}, MRR@20 ${chosen.mrr20})`);
  sweep.sort((a, b) => a.lambda - b.lambda);

  // The hybrid and BM25 settings on the dev split.
  const sweeps: Sweep[] = [];
  const devWithSections = dev.filter((q) => q.goldSections.length > 0).length;
  const devSweep = async (
    mode: RetrievalMode,
    varied: string,
    grid: Array<Partial<RunParams> & { params: Record<string, number | string> }>,
    judge: 'target' | 'stage' | 'section' = 'target',
  ): Promise<Sweep | undefined> => {
    const skip = settings.skipSweeps?.find((part) => varied.includes(part));
    if (skip !== undefined) {
      log(`  ${mode} sweep of "${varied}" skipped (--skip-sweep ${skip})`);
      return undefined;
    }
    if (judge === 'section' && devWithSections === 0) return undefined;
    const reused = settings.reuse?.sweeps.find((w) => w.mode === mode && w.varied === varied);
    if (settings.reuse && !reused) log(`  the reused sweeps have no ${mode} sweep of "${varied}": running it`);
    if (reused) {
      sweeps.push(reused);
      return reused;
    }
    const points: SweepPoint[] = [];
    for (const { params, ...over } of grid) {
      const s = scoreOutcomes(await run(dev, mode, over));
      const r = judge === 'stage' ? s.stage! : judge === 'section' ? s.section! : judged(s, mode, target)!;
      points.push({ params, top: r.top, mrr20: r.mrr20 });
    }
    const judgedBy = {
      stage: 'document-stage recall',
      section: `section Top-k, over the ${devWithSections} questions with a gold section`,
      target: `${target} Top-k`,
    }[judge];
    const result = { mode, varied, judged: `${judgedBy} (dev)`, points, best: bestPoint(points, judge === 'stage') };
    log(`  ${mode} ${varied}: best ${JSON.stringify(result.best.params)} (Top-20 ${result.best.top['20']}, MRR@20 ${result.best.mrr20})`);
    sweeps.push(result);
    return result;
  };
  const bm25 = (over: Partial<Bm25Settings>) => ({ ...DEFAULT_BM25, ...over });
  await devSweep(
    'LEXICAL',
    'BM25 k1, b',
    BM25_K1.flatMap((k1) => BM25_B.map((b) => ({ bm25: bm25({ k1, b }), params: { k1, b } }))),
  );
  await devSweep(
    'LEXICAL_DOCUMENTS',
    'BM25F summary weight',
    SUMMARY_WEIGHTS.map((w) => ({ bm25: bm25({ summaryWeight: w }), params: { summaryWeight: w } })),
    'stage',
  );
  const alphaFlat = await devSweep(
    'HYBRID',
    'alpha',
    ALPHAS.map((alpha) => ({ alpha, params: { alpha } })),
  );
  // The dense document score (summary vector vs best passage), judged by the document stage.
  const shares = await devSweep(
    DEFAULT_MODE,
    'summary share of the dense document score, alpha',
    SUMMARY_SHARES.flatMap((summaryShare) => STAGE_ALPHAS.map((documentAlpha) => ({ summaryShare, documentAlpha, params: { summaryShare, documentAlpha } }))),
    'stage',
  );
  // The same from passages over every passage of a candidate: the mean of its top 3,
  // its centroid. A sweep of its own, so reports written before it was added still reuse theirs.
  await devSweep(
    DEFAULT_MODE,
    'summary share of the dense document score, alpha, passage score (top 3, centroid)',
    (['top3', 'centroid'] as const).flatMap((documentPassages) =>
      SUMMARY_SHARES.filter((share) => share < 1).flatMap((summaryShare) =>
        STAGE_ALPHAS.map((documentAlpha) => ({ summaryShare, documentAlpha, documentPassages, params: { summaryShare, documentAlpha, documentPassages } })),
      ),
    ),
    'stage',
  );
  // Several summary vectors (max-sim over the summary and its pieces), with the summary's share
  // above 0 (at 0 the summary is not read). A sweep of its own, as the one above.
  await devSweep(
    DEFAULT_MODE,
    'summary share of the dense document score, alpha, several summary vectors',
    SUMMARY_SHARES.filter((share) => share > 0).flatMap((summaryShare) =>
      STAGE_ALPHAS.map((documentAlpha) => ({ summaryShare, documentAlpha, summaryPieces: true, params: { summaryShare, documentAlpha, summaryPieces: 1 } })),
    ),
    'stage',
  );
  // Then the passage stage: its alpha and λ, at the product's document stage (not this set's own
  // best), so the same grid points exist on both sets and scripts/choose-defaults.ts can pick one.
  void shares;
  const lambdaHier = await devSweep(
    DEFAULT_MODE,
    passageStage,
    PASSAGE_ALPHAS.flatMap((alpha) =>
      HYBRID_LAMBDAS.map((lambda) => ({
        alpha,
        lambda,
        summaryShare,
        documentAlpha,
        ...(pieces ? { summaryPieces: true } : {}),
        ...NO_DECAY,
        params: { alpha, lambda, documentAlpha, summaryShare, ...(pieces ? { summaryPieces: 1 } : {}) },
      })),
    ),
  );
  void alphaFlat;
  // A bound on passages per document at the product's other defaults (a few long pages can fill
  // the top k2 with their passages and push the gold page out); k2 = no bound.
  const { lambda: defaultLambda, alpha: defaultAlpha } = MODES.HYBRID_HIERARCHICAL.defaults;
  const perDocumentGrid = [...PER_DOCUMENT, settings.k2].map((perDocument) => ({ perDocument, ...NO_DECAY, params: { perDocument } }));
  const perDocumentSweep = await devSweep(
    DEFAULT_MODE,
    `passages per document (alpha ${defaultAlpha}, λ ${defaultLambda}, ${passageStage.slice(passageStage.indexOf('document stage'))}`,
    perDocumentGrid,
  );
  // The same bound judged by the gold section, where the set has them beside a coarser target: judged
  // by documents a bound of one can only move a document's best passage up (the passages it drops are
  // never that document's first), so the two judgements can disagree; the choice stays the target's.
  await devSweep(
    DEFAULT_MODE,
    `the bound per document, judged by gold section (alpha ${defaultAlpha}, λ ${defaultLambda}, ${passageStage.slice(passageStage.indexOf('document stage'))}`,
    perDocumentGrid,
    'section',
  );
  // The softer form, a decay of a document's further passages, at the same defaults.
  await devSweep(
    DEFAULT_MODE,
    `per-document decay (alpha ${defaultAlpha}, λ ${defaultLambda}, ${passageStage.slice(passageStage.indexOf('document stage'))}`,
    PER_DOCUMENT_DECAYS.map((perDocumentDecay) => ({ perDocumentDecay, params: { perDocumentDecay } })),
  );
  // A budget on stage 2's passages at the product's other defaults (stage 2's cost is its
  // passages, and on a corpus of few long documents k1 = 100 documents reach a third of it).
  await devSweep(
    DEFAULT_MODE,
    `stage 2's passage budget (alpha ${defaultAlpha}, λ ${defaultLambda}, ${passageStage.slice(passageStage.indexOf('document stage'))}`,
    [
      ...PASSAGE_BUDGETS.map((passageBudget) => ({ passageBudget, ...NO_DECAY, params: { passageBudget } })),
      { passageBudget: null, ...NO_DECAY, params: { passageBudget: 'none' } },
    ],
  );

  // Every mode on the test split.
  const byMode = new Map<RetrievalMode, QuestionOutcome[]>();
  const modes: EvalOutcome['modes'] = {};
  const modeParams: EvalOutcome['modeParams'] = {};
  for (const mode of RETRIEVAL_MODES) {
    const over = mode === 'HIERARCHICAL' || mode === 'PARALLEL' ? { lambda: chosen.lambda } : {};
    modeParams[mode] = { ...defaults(mode), ...over };
    const outcomes = await run(test, mode, over);
    byMode.set(mode, outcomes);
    modes[mode] = scoreOutcomes(outcomes);
    const s = judged(modes[mode]!, mode, target);
    const stage = modes[mode]!.stage;
    log(
      `  ${mode}: Top-1/5/20/100 ${KS_TEXT(s?.top)}${stage ? `, stage recall@20/100 ${KS_TEXT(stage.top)}` : ''}, p50 ${modes[mode]!.latencyMs.p50.toFixed(1)} ms`,
    );
  }
  let highlights: HighlightScores | undefined;
  if (target === 'answer') {
    highlights = await measureHighlights(corpus, test, { mode: DEFAULT_MODE, ...defaults(DEFAULT_MODE) });
    log(
      `  highlights: ${highlights.spanContains}/${highlights.top1Contains} top-1 answers in the highlight (${highlights.spanShare}), ` +
        `in its sentence ${highlights.sentenceShare}; Top-1 by highlight ${highlights.top1HighlightAccuracy}; top 5 cost p50 ${highlights.highlightMs.p50} ms`,
    );
  }
  const devBest = { ...defaults(DEFAULT_MODE), ...lambdaHier!.best.params } as Omit<RunParams, 'mode'>;
  const defaultAtDevBest = { params: devBest, scores: scoreOutcomes(await run(test, DEFAULT_MODE, devBest)) };
  // What PER_DOCUMENT at this set's dev-best bound would give (a per-corpus setting; none is the product's default).
  const bound = perDocumentSweep?.best.params.perDocument;
  let defaultAtDevPerDocument: EvalOutcome['defaultAtDevPerDocument'];
  if (typeof bound === 'number' && bound < settings.k2 && bound !== defaults(DEFAULT_MODE).perDocument) {
    const params = { ...defaults(DEFAULT_MODE), perDocument: bound };
    defaultAtDevPerDocument = { params, scores: scoreOutcomes(await run(test, DEFAULT_MODE, params)) };
  }
  const modesAtLambda1: EvalOutcome['modesAtLambda1'] = {};
  for (const mode of ['HIERARCHICAL', 'PARALLEL'] as const) {
    modesAtLambda1[mode] = chosen.lambda === 1 ? modes[mode] : scoreOutcomes(await run(test, mode, { lambda: 1 }));
  }

  // k1 for the default mode on the test split (reported, not used for any choice).
  const k1Sweep: EvalOutcome['k1Sweep'] = [];
  for (const k1 of settings.k1Sweep) {
    const scores = k1 === settings.k1 ? modes[DEFAULT_MODE]! : scoreOutcomes(await run(test, DEFAULT_MODE, { k1 }));
    k1Sweep.push({ k1, scores });
    log(`  ${DEFAULT_MODE} k1 = ${k1}: Top-20 ${targetScores(scores, target)?.top['20']}, stage recall@100 ${scores.stage?.top['100']}`);
  }

  // Failure examples: where the default mode misses the top 20 and another mode does not, and the reverse.
  const rankIn = (mode: RetrievalMode, i: number) => targetRank(byMode.get(mode)![i], target) ?? null;
  const within20 = (r: number | null) => r !== null && r <= 20;
  const shown: RetrievalMode[] = [DEFAULT_MODE, 'HIERARCHICAL', 'FLAT', 'LEXICAL', 'HYBRID'];
  const example = (i: number, foundBy?: RetrievalMode): FailureExample => ({
    question: test[i].question,
    gold: goldOf(test[i], target),
    ranks: Object.fromEntries(shown.map((m) => [m, rankIn(m, i)])),
    defaultTop: byMode.get(DEFAULT_MODE)![i].top.map(describe),
    ...(foundBy ? { foundBy: { mode: foundBy, result: describe(byMode.get(foundBy)![i].hits[target] ?? byMode.get(foundBy)![i].top[0]) } } : {}),
  });
  const losses: FailureExample[] = [];
  const wins: FailureExample[] = [];
  test.forEach((_, i) => {
    const h = rankIn(DEFAULT_MODE, i);
    const other = shown.slice(1).find((m) => within20(rankIn(m, i)));
    if (!within20(h) && other && losses.length < 5) losses.push(example(i, other));
    if (within20(h) && !within20(rankIn('LEXICAL', i)) && !within20(rankIn('HIERARCHICAL', i)) && wins.length < 3) wins.push(example(i));
  });
  if (losses.length === 0) {
    test.forEach((_, i) => {
      if (!within20(rankIn(DEFAULT_MODE, i)) && losses.length < 5) losses.push(example(i));
    });
  }
  return {
    target,
    split: { dev: dev.length, test: test.length },
    lambdaSweep: sweep,
    lambda: chosen.lambda,
    sweeps,
    modes,
    modeParams,
    defaultAtDevBest,
    ...(defaultAtDevPerDocument ? { defaultAtDevPerDocument } : {}),
    modesAtLambda1,
    k1Sweep,
    losses,
    wins,
    ...(highlights ? { highlights } : {}),
  };
}

const KS_TEXT = (top: Record<string, number> | undefined) => (top ? ['1', '5', '20', '100'].map((k) => top[k].toFixed(3)).join('/') : 'n/a');
