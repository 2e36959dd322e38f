/** The report's "Query-side adapter (test split)" section, from an `AdapterEvaluation`. */
import { DEFAULT_MODE, type RetrievalMode } from '../retrieval/modes';
import { ADAPTER_GOALS, ADAPTER_RUNS, type AdapterEvaluation, type AdapterRun, type AdapterTraining, type TrainedRun } from './adapters';
import { targetScores, type RankScores } from './scores';

const pct = (x: number | undefined) => (x === undefined ? '–' : (100 * x).toFixed(1));
const points = (d: number) => `${d >= 0 ? '+' : ''}${(100 * d).toFixed(1)}`;

function judgedOf(a: AdapterEvaluation, mode: RetrievalMode, run: AdapterRun): RankScores | null {
  const s = a.scores[mode]?.[run];
  return s ? targetScores(s, a.target) : null;
}

/** Top-20 difference to no adapter, as a fraction; null when either is missing. */
export function top20Delta(a: AdapterEvaluation, mode: RetrievalMode, run: AdapterRun): number | null {
  const none = judgedOf(a, mode, 'none');
  const with_ = judgedOf(a, mode, run);
  return none && with_ ? Math.round((with_.top['20'] - none.top['20']) * 10000) / 10000 : null;
}

/** One sentence per goal: met, or missed by how many points (or not trained, and why). */
export function goalSentences(a: AdapterEvaluation): string[] {
  return ADAPTER_GOALS.map(({ run, points: goal }) => {
    const what = `Goal: ${run} pairs add ≥ ${goal} points ${a.target} Top-20 to ${DEFAULT_MODE}`;
    const d = top20Delta(a, DEFAULT_MODE, run);
    if (d === null) return `${what} — **not measured**: ${a.training[run]?.notTrained ?? 'no scores'}.`;
    const got = 100 * d;
    return got >= goal - 1e-9
      ? `${what} — **met** (${points(d)} points).`
      : `${what} — **missed** by ${(goal - got).toFixed(1)} points (${points(d)}); the adapter stays off by default.`;
  });
}

function trainingLine(run: TrainedRun, t: AdapterTraining): string {
  const kinds =
    Object.entries(t.kinds)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const head = `- **${run}**: ${t.pairs} pairs (${kinds}); pairs built in ${t.pairSeconds} s, trained in ${t.trainSeconds} s`;
  const scanned = t.scanned
    ? `; sampled from ${Object.entries(t.scanned)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')} candidates`
    : '';
  const positives = t.positives
    ? `; positives: ${t.positives.answerString} by answer string, ${t.positives.denseTop} dense top of the gold documents${t.positives.dropped ? `, ${t.positives.dropped} questions without a gold document dropped` : ''}`
    : '';
  if (t.notTrained) return `${head}${scanned}${positives}. Not trained: ${t.notTrained}.`;
  const levels = Object.entries(t.levels).map(
    ([level, r]) =>
      `${level}: ${r.trainPairs} train / ${r.heldOutPairs} held-out${r.skipped ? ` (${r.skipped} skipped)` : ''}, ${r.epochsRun} epochs, kept epoch ${r.bestEpoch}${r.bestEpoch === 0 ? ' (the identity)' : ''}; held-out recall@1 ${r.identity.accuracy.toFixed(3)} → ${r.kept.accuracy.toFixed(3)}, loss ${r.identity.loss.toFixed(3)} → ${r.kept.loss.toFixed(3)}`,
  );
  return `${head}${scanned}${positives}.\n  - ${levels.join('\n  - ')}`;
}

export function adapterSection(a: AdapterEvaluation): string {
  const runs = ADAPTER_RUNS.filter((r) => a.modes.some((m) => a.scores[m]?.[r]));
  const head = [
    'mode',
    ...runs.flatMap((r) => (r === 'none' ? [`${r} Top-1`, `${r} Top-5`, `${r} Top-20`] : [`${r} Top-1`, `${r} Top-5`, `${r} Top-20`, `${r} Δ20`])),
  ];
  const rows = a.modes.map((mode) => {
    const cells = [mode === DEFAULT_MODE ? `**${mode}** (default)` : mode];
    for (const run of runs) {
      const s = judgedOf(a, mode, run);
      cells.push(pct(s?.top['1']), pct(s?.top['5']), pct(s?.top['20']));
      if (run !== 'none') {
        const d = top20Delta(a, mode, run);
        cells.push(d === null ? '–' : points(d));
      }
    }
    return `| ${cells.join(' | ')} |`;
  });
  const trained = (['mined', 'labels', 'both'] as const).filter((r) => a.training[r]);
  return `## Query-side adapter (test split)

Adapters trained with ${a.settings.training}: **mined** on pairs mined from the corpus (link and title-tree kinds, a seeded uniform sample of at most ${a.settings.minedPerKind} per kind from the first ${a.settings.minedScanPerKind} candidates of each, seed ${a.settings.seed}; no eval labels), **labels** on the ${a.devQuestions} dev questions (${a.settings.labels}), **both** on the union. Each is applied in memory to the question vectors and scored on the ${a.testQuestions} test questions at the mode's parameters above; **none** is the same run without adapter. ${a.target} Top-k, percentages; Δ20: Top-20 points over none. Adapter runs took ${a.seconds} s.

| ${head.join(' | ')} |
| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |
${rows.join('\n')}

${goalSentences(a)
  .map((s) => `- ${s}`)
  .join('\n')}

Training records:

${trained.map((r) => trainingLine(r, a.training[r]!)).join('\n')}

`;
}
