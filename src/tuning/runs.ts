import { DomainError } from '../errors';
import type { RetrievalMode } from '../retrieval/modes';
import { RANKING_NAMES, type Ranking } from '../retrieval/parameters';
import { setModeSettings } from '../retrieval/settings';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { createTuneRun, failTuneRun, finishTuneRun, tuneRunProgress, type TuneRunRow } from '../store/tune-runs';
import { BUDGET_RECALL_DEPTH, type BudgetSearch } from './budget';
import { tune, type PointScore, type TuneOptions, type TuneReport } from './tune';

/** A point of the report as stored and served: no per-question ranks. */
const summary = (p: PointScore) => ({ label: p.label, mode: p.mode, values: p.values, mrr: p.mrr, top1: p.top1, top20: p.top20, byKind: p.byKind });

/** What a tune stores and serves: the questions, the baselines, the grid best first, the choice, and stage 2's passage budget. */
export function reportRecord(r: TuneReport) {
  return {
    mode: r.mode,
    questions: r.questions,
    current: summary(r.current),
    defaults: summary(r.defaults),
    lexical: summary(r.lexical),
    hybrid: summary(r.hybrid),
    grid: [...r.grid].sort((a, b) => b.mrr - a.mrr).map(summary),
    choice: {
      change: r.choice.change,
      chosen: { label: r.choice.chosen.label, values: r.choice.chosen.values, mrr: r.choice.chosen.mrr },
      margin: r.choice.margin,
      standardError: r.choice.standardError,
      reason: r.choice.reason,
    },
    ...(r.passageBudget ? { passageBudget: budgetRecord(r.passageBudget) } : {}),
    seconds: r.seconds,
    pointsRun: r.pointsRun,
  };
}

/** The budget search as stored: stage 2's size, each budget's recall and MRR, the choice and why. */
const budgetRecord = (b: BudgetSearch) => ({
  stage2Passages: b.stage2Passages,
  points: b.points.map((p) => ({ passageBudget: p.values.passageBudget, mrr: p.mrr, recall: p.recall, recallDepth: BUDGET_RECALL_DEPTH })),
  chosen: b.chosen,
  reason: b.reason,
});

/** A report as stored and served: what `dhr tune` prints, through a server too. */
export type TuneRecord = ReturnType<typeof reportRecord>;

/** What a tune changes is read from its report, or from the record of it (dhr tune --url has only that). */
interface ChoiceMade {
  current: { values: Ranking };
  choice: { change: boolean; chosen: { values: Ranking } };
  passageBudget?: { points: readonly unknown[]; chosen: number | null };
}

/** The budget the search chose, when it tried any (undefined: none tried, the budget in force stays). */
export const searchedBudget = (r: ChoiceMade): number | null | undefined =>
  r.passageBudget && r.passageBudget.points.length > 0 ? r.passageBudget.chosen : undefined;

/** Whether the budget search chose other than the budget in force. */
const budgetChanges = (r: ChoiceMade) => {
  const budget = searchedBudget(r);
  return budget !== undefined && budget !== r.current.values.passageBudget;
};

/**
 * The parameters a tune changes against the settings in force (what --apply and apply store): the
 * chosen point's, when it beats the settings in force, and stage 2's passage budget, when the
 * search chose another (on its own rule: a budget may change while the weights stay).
 */
export function changedValues(r: ChoiceMade): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // (the grid never varies the budget, so the chosen point's is the one in force)
  if (r.choice.change) for (const name of RANKING_NAMES) if (r.choice.chosen.values[name] !== r.current.values[name]) out[name] = r.choice.chosen.values[name];
  if (budgetChanges(r)) out.passageBudget = r.passageBudget!.chosen;
  return out;
}

/** Stores what a tune changes (changedValues) as a new settings version, with its evidence; null when it changes nothing. */
export async function applyChoice(db: Database, r: TuneReport, seed: number): Promise<number | null> {
  const values = changedValues(r);
  if (Object.keys(values).length === 0) return null;
  const version = await setModeSettings(db, r.mode, {
    values,
    setBy: 'tune',
    note: [r.choice.change ? r.choice.reason : '', budgetChanges(r) ? r.passageBudget!.reason : ''].filter(Boolean).join('; '),
    evidence: {
      questions: r.questions,
      seed,
      chosen: { label: r.choice.chosen.label, mrr: r.choice.chosen.mrr },
      inForce: { label: r.current.label, mrr: r.current.mrr },
      defaults: { mrr: r.defaults.mrr },
      lexical: { mrr: r.lexical.mrr },
      margin: r.choice.margin,
      standardError: r.choice.standardError,
      ...(r.passageBudget ? { passageBudget: budgetRecord(r.passageBudget) } : {}),
    },
  });
  return version.version;
}

/**
 * A tune started through the API: recorded at once, run in the background of this process with
 * its progress written after every point, and finished with its report (and, with `apply`, the
 * settings version it stored). `settled` resolves when it ends (for tests and shutdown).
 */
export async function startTuneRun(
  db: Database,
  targets: EmbeddingTargets,
  o: {
    mode: RetrievalMode;
    perKind: number;
    seed: number;
    apply: boolean;
    tune?: Omit<TuneOptions, 'mode' | 'perKind' | 'seed' | 'onProgress'>;
    onApplied?: () => void;
    /** An unexpected failure (a bug, not a refusal), for the server's log. */
    onError?: (error: unknown) => void;
  },
): Promise<{ run: TuneRunRow; settled: Promise<void> }> {
  const options = {
    perKind: o.perKind,
    seed: o.seed,
    ...(o.tune?.kinds ? { kinds: o.tune.kinds } : {}),
    ...(o.tune?.labelled ? { labelled: o.tune.labelled.length } : {}),
  };
  const run = await createTuneRun(db, { mode: o.mode, options, apply: o.apply });
  const settled = (async () => {
    try {
      const report = await tune(db, targets, {
        ...o.tune,
        mode: o.mode,
        perKind: o.perKind,
        seed: o.seed,
        onProgress: (done, total) => void tuneRunProgress(db, run.id, done, total).catch(() => undefined),
      });
      const settingsVersion = o.apply ? await applyChoice(db, report, o.seed) : null;
      if (settingsVersion !== null) o.onApplied?.();
      await finishTuneRun(db, run.id, { report: reportRecord(report), settingsVersion, pointsRun: report.pointsRun });
    } catch (error) {
      // The run's record says why: a refusal's own message, written for the caller, or a generic one.
      const expected = error instanceof DomainError;
      await failTuneRun(db, run.id, expected ? error.message : 'the tune failed unexpectedly (see the server log)').catch(() => undefined);
      if (!expected) o.onError?.(error);
    }
  })();
  return { run, settled };
}
