import type { Ranking } from '../retrieval/parameters';

/** What the chooser needs of a scored point. */
export interface Scored {
  label: string;
  values: Ranking;
  mrr: number;
  reciprocalRanks: number[];
}

export interface Choice {
  /** Whether the best point should replace the settings in force. */
  change: boolean;
  chosen: Scored;
  /** The chosen point's MRR minus the settings in force's, on the same questions. */
  margin: number;
  /** The standard error of that margin (paired over questions). */
  standardError: number;
  reason: string;
}

/** A gain smaller than this (MRR, absolute) keeps the settings in force, however sure it is. */
export const MIN_GAIN = 0.01;
/** ... and so does a gain within this many standard errors of zero (paired over the questions). */
export const MIN_STANDARD_ERRORS = 2;
/** A source of questions with at least this many (a tune draws 40 of each kind) has a say of its own. */
export const MIN_KIND_QUESTIONS = 20;

/**
 * The weights of the dense side the tune never lowers. Its pseudo-questions are extractive (a
 * section path, a title, a sentence: each shares its gold's words), so their MRR rewards BM25
 * whether or not real questions do: on the dev splits of factbook-attributes and pydocs every
 * source but the Factbook's cloze sentences ranked alpha 0.1 first, while their labelled
 * questions, paraphrases, wanted 0.5 or more (`dhr eval --tune-gap`, docs/eval/README.md). A
 * move towards the dense side, against that bias, is still taken.
 */
export const DENSE_WEIGHTS = ['alpha', 'documentAlpha'] as const;

/** The dense weights `point` sets below `current`'s (none: the tune may choose it). */
export function lowersDense(point: Ranking, current: Ranking): (typeof DENSE_WEIGHTS)[number][] {
  return DENSE_WEIGHTS.filter((w) => point[w] < current[w]);
}

/**
 * The best grid point by MRR among those that lower no dense weight (lowersDense) replaces the
 * settings in force only if it is better by at least MIN_GAIN and by MIN_STANDARD_ERRORS paired
 * standard errors (the same questions run at both, so per-question differences cancel the
 * questions' own difficulty), never if it scores below LEXICAL alone on the same questions, and
 * never if a source of questions (`kinds`, one per question) scores it lower than the settings in
 * force (kindsAgainst): then the sources disagree on which way to move, and the next point down
 * is not asked instead (on the Factbook's dev split that next point, λ 2 with α 0.1, lost to the
 * settings in force too: docs/eval/README.md), and never if fewer than MIN_CARRYING_KINDS sources
 * gain by it where that many have a say. Otherwise the settings in force stay, and the
 * reason says why. On few questions the standard error is large, so thin evidence moves nothing.
 */
export function chooseSettings(s: { current: Scored; defaults: Scored; lexical: Scored; grid: Scored[]; kinds?: readonly string[] }): Choice {
  const byMrr = (a: Scored, b: Scored) => b.mrr - a.mrr || a.label.localeCompare(b.label);
  const top = [...s.grid].sort(byMrr)[0];
  const best = s.grid.filter((p) => lowersDense(p.values, s.current.values).length === 0).sort(byMrr)[0] ?? s.current;
  // The reason names a better-scoring point passed over for lowering a dense weight.
  const passed =
    top && top !== best && top.mrr > best.mrr
      ? `; passed over: ${top.label} (MRR ${top.mrr.toFixed(3)}), which lowers ${lowersDense(top.values, s.current.values).join(' and ')}, a move pseudo-questions cannot judge`
      : '';
  const { mean, standardError } = pairedDifference(best.reciprocalRanks, s.current.reciprocalRanks);
  const keep = (reason: string): Choice => ({ change: false, chosen: s.current, margin: mean, standardError, reason: reason + passed });
  if (best.mrr < s.lexical.mrr) {
    return keep(`the best point (${best.label}, MRR ${best.mrr.toFixed(3)}) scores below LEXICAL alone (${s.lexical.mrr.toFixed(3)}) on these questions`);
  }
  if (mean < MIN_GAIN) return keep(`the best point (${best.label}) gains ${mean.toFixed(3)} MRR over the settings in force, under the ${MIN_GAIN} needed`);
  if (mean < MIN_STANDARD_ERRORS * standardError) {
    return keep(
      `the best point (${best.label}) gains ${mean.toFixed(3)} ± ${standardError.toFixed(3)} MRR: within ${MIN_STANDARD_ERRORS} standard errors of none`,
    );
  }
  // Each source's margin, read once: a source against the change, and the sources carrying it.
  const margins = s.kinds ? kindMargins(best.reciprocalRanks, s.current.reciprocalRanks, s.kinds) : [];
  const against = margins.filter((k) => k.margin <= -MIN_GAIN);
  if (against.length > 0) {
    const list = against.map((k) => `${k.kind} ${k.margin.toFixed(3)} over ${k.questions} questions`).join(', ');
    return keep(
      `the best point (${best.label}) gains ${mean.toFixed(3)} ± ${standardError.toFixed(3)} MRR in all but loses on ${list}: the sources of questions disagree`,
    );
  }
  const carriers = margins.filter((k) => k.margin >= MIN_GAIN);
  if (margins.length >= MIN_CARRYING_KINDS && carriers.length < MIN_CARRYING_KINDS) {
    const list = margins.map((k) => `${k.kind} ${k.margin >= 0 ? '+' : ''}${k.margin.toFixed(3)}`).join(', ');
    return keep(
      `the best point (${best.label}) gains ${mean.toFixed(3)} ± ${standardError.toFixed(3)} MRR, carried by ${carriers.length === 0 ? 'no source' : `${carriers[0].kind} alone`} (${list}): a change needs ${MIN_CARRYING_KINDS} sources of questions behind it`,
    );
  }
  return {
    change: true,
    chosen: best,
    margin: mean,
    standardError,
    reason: `${best.label} gains ${mean.toFixed(3)} ± ${standardError.toFixed(3)} MRR over the settings in force${passed}`,
  };
}

/**
 * The sources of questions (each with MIN_KIND_QUESTIONS or more) on which `point` scores below
 * `current` by MIN_GAIN or more, with that margin. A change must not be carried by one kind of
 * pseudo-question against another: on the Factbook, the cloze questions favoured λ 2 with α 0.3
 * by 0.176 MRR while its document titles lost 0.047 and its section paths 0.012 by it, and the
 * real questions of its dev split sided with the settings in force (docs/eval/README.md).
 */
export function kindsAgainst(
  point: readonly number[],
  current: readonly number[],
  kinds: readonly string[],
): { kind: string; margin: number; questions: number }[] {
  return kindMargins(point, current, kinds).filter((k) => k.margin <= -MIN_GAIN);
}

/**
 * How many sources of questions must gain MIN_GAIN or more by a change, where at least that many
 * have a say: a gain one kind carries alone is that kind's bias. On the Factbook the whole gain of
 * λ 2 came from the cloze sentences (MRR 0.493 → 0.614) while its section paths and titles did not
 * move (0.898, 0.068), and its labelled dev splits lost 1.7–1.8 at Top-1 by it (docs/eval/README.md).
 */
export const MIN_CARRYING_KINDS = 2;

/** `point`'s paired MRR margin over `current` per source of questions that has a say (MIN_KIND_QUESTIONS or more), in the kinds' order. */
export function kindMargins(
  point: readonly number[],
  current: readonly number[],
  kinds: readonly string[],
): { kind: string; margin: number; questions: number }[] {
  const byKind = new Map<string, number[]>();
  kinds.forEach((k, i) => {
    const idx = byKind.get(k);
    if (idx) idx.push(i);
    else byKind.set(k, [i]);
  });
  const out: { kind: string; margin: number; questions: number }[] = [];
  for (const [kind, idx] of byKind) {
    if (idx.length < MIN_KIND_QUESTIONS) continue;
    const { mean } = pairedDifference(
      idx.map((i) => point[i]),
      idx.map((i) => current[i]),
    );
    out.push({ kind, margin: mean, questions: idx.length });
  }
  return out;
}

/** Mean and standard error of a − b, question by question. */
export function pairedDifference(a: readonly number[], b: readonly number[]): { mean: number; standardError: number } {
  const n = a.length;
  if (n === 0 || n !== b.length) return { mean: 0, standardError: Infinity };
  const d = a.map((x, i) => x - b[i]);
  const mean = d.reduce((x, y) => x + y, 0) / n;
  if (n < 2) return { mean, standardError: Infinity };
  const variance = d.reduce((x, y) => x + (y - mean) ** 2, 0) / (n - 1);
  return { mean, standardError: Math.sqrt(variance / n) };
}

/** Stage 2's passage budget a tune chose (budget.ts), and why. */
export interface BudgetChoice {
  /** null: none (every passage of the k1 documents). */
  chosen: number | null;
  reason: string;
}

/** What chooseBudget needs of a point: its budget, MRR@k2, and per question whether its gold is within the judged depth. */
interface BudgetScored {
  values: { passageBudget: number | null };
  mrr: number;
  found: readonly boolean[];
}

/**
 * The smallest budget that loses nothing against none on the same questions: no question whose
 * gold none finds within `depth` loses it, and MRR@k2 not lower by MIN_GAIN or more. None when
 * every budget tried loses. Per question, not in total: rankings under a budget move both ways (a
 * smaller stage 2 normalizes its scores over fewer passages), and on the Python docs a budget whose
 * pseudo-questions' gains hid their losses (3,200: one lost, one gained) lost real questions'
 * recall@100 on the dev split, as every budget did (docs/eval/README.md). A budget buys speed,
 * not quality, so one that scores better is not preferred for that.
 */
export function chooseBudget(none: BudgetScored, tried: readonly BudgetScored[], o: { k2: number; depth: number }): BudgetChoice {
  const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
  const recall = (p: BudgetScored) => p.found.filter(Boolean).length / Math.max(1, p.found.length);
  const lost = (p: BudgetScored) => p.found.filter((f, i) => none.found[i] && !f).length;
  const ladder = [...tried].sort((a, b) => a.values.passageBudget! - b.values.passageBudget!);
  const names = ladder.map((p) => p.values.passageBudget).join(', ');
  const kept = ladder.find((p) => lost(p) === 0 && p.mrr > none.mrr - MIN_GAIN);
  if (!kept) {
    const losses = ladder.map((p) => `${p.values.passageBudget}: ${lost(p)} lost, MRR ${p.mrr.toFixed(3)}`).join('; ');
    return {
      chosen: null,
      reason: `every budget tried loses a question's gold at ${o.depth} or MRR@${o.k2} against none (found ${pct(recall(none))}, MRR ${none.mrr.toFixed(3)}; ${losses}): none`,
    };
  }
  return {
    chosen: kept.values.passageBudget,
    reason: `passageBudget ${kept.values.passageBudget}, the smallest of ${names} that loses nothing against none: no question's gold lost at ${o.depth} (found ${pct(recall(kept))}, none ${pct(recall(none))}), MRR@${o.k2} ${kept.mrr.toFixed(3)} (none ${none.mrr.toFixed(3)})`,
  };
}
