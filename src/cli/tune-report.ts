import type { RetrievalMode } from '../retrieval/modes';
import { PSEUDO_KINDS, type PseudoKind } from '../tuning/pseudo-questions';
import { changedValues, type TuneRecord } from '../tuning/runs';

/**
 * What `dhr tune` prints, from the record of its report that a tune run stores (tuning/runs.ts
 * reportRecord), whichever store ran it. Loads neither PGlite nor onnxruntime.
 */

/** `dhr tune`'s options, here and with --url. */
export interface TuneCommandOptions {
  mode?: RetrievalMode;
  perKind?: number;
  seed?: number;
  kinds?: PseudoKind[];
  /** A JSONL file of labelled questions: {"question": "…", "passageIds": [..]} or {"question": "…", "documentKeys": [..]}. */
  questions?: string;
  apply?: boolean;
}

type Point = TuneRecord['grid'][number];

const pct = (x: number) => (100 * x).toFixed(1);
/** A point's row: its scores, then its MRR@20 per source of questions (in `kinds`' order), so a reader sees which sources carry it. */
const row = (p: Point, kinds: readonly (keyof Point['byKind'])[], note = '') =>
  `| ${p.mode === 'LEXICAL' || p.mode === 'HYBRID' ? p.mode : p.label} | ${p.mrr.toFixed(3)} | ${pct(p.top1)} | ${pct(p.top20)} | ${kinds.map((k) => p.byKind[k]?.mrr.toFixed(3) ?? '–').join(' / ')} | ${note} |`;

/** The report as Markdown: the questions, the baselines, the grid best first, and the choice. */
export function formatTuneReport(r: TuneRecord): string {
  const counts = Object.entries(r.questions)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const total = Object.values(r.questions).reduce((a, b) => a + b, 0);
  const kinds = Object.keys(r.current.byKind) as (keyof Point['byKind'])[];
  const lines = [
    `${r.mode}: ${total} questions (${counts})`,
    '',
    `| point | MRR@20 | Top-1 % | Top-20 % | MRR@20 by source (${kinds.join(' / ')}) | |`,
    '|---|---:|---:|---:|---|---|',
    row(r.current, kinds, 'in force'),
    row(r.defaults, kinds, 'built-in defaults'),
    row(r.lexical, kinds, 'baseline'),
    row(r.hybrid, kinds, 'baseline'),
    // The chosen point by its label: grid labels are distinct, and a kept choice is the settings in force, labelled 'in force'.
    ...[...r.grid].sort((a, b) => b.mrr - a.mrr).map((p) => row(p, kinds, p.label === r.choice.chosen.label ? 'chosen' : '')),
    '',
    `${r.choice.change ? 'change' : 'keep the settings in force'}: ${r.choice.reason}`,
    ...(r.passageBudget ? budgetLines(r, r.passageBudget) : []),
  ];
  return lines.join('\n');
}

/** Stage 2's passage budget: each budget tried against none, and the choice. */
function budgetLines(r: TuneRecord, b: NonNullable<TuneRecord['passageBudget']>): string[] {
  const inForce = r.current.values.passageBudget;
  const head = ['', `Stage 2's passage budget (stage 2 scores about ${b.stage2Passages} passages a question without one; in force: ${inForce ?? 'none'})`];
  if (b.points.length === 0) return [...head, `budget: ${b.reason}`];
  return [
    ...head,
    '',
    `| passageBudget | MRR@20 | recall@${b.points[0].recallDepth} % | |`,
    '|---|---:|---:|---|',
    ...b.points.map((p) => `| ${p.passageBudget ?? 'none'} | ${p.mrr.toFixed(3)} | ${pct(p.recall)} | ${p.passageBudget === b.chosen ? 'chosen' : ''} |`),
    '',
    `budget ${b.chosen === inForce ? 'stays' : 'changes'}: ${b.reason}`,
  ];
}

/** The report on stdout, and on stderr how many points it ran and for how long. */
export function printTuneReport(r: TuneRecord): void {
  console.log(formatTuneReport(r));
  // stderr, as the progress: the report itself stays the same from run to run of one store and seed
  console.error(`tune: ${r.pointsRun} points run in ${r.seconds.toFixed(0)} s`);
}

/** What was stored, on stderr (`version`: the settings version the choice was stored as; null: none). */
export function printStored(r: TuneRecord, apply: boolean | undefined, version: number | null): number {
  if (version !== null) {
    console.error(`stored as retrieval settings version ${version}: ${JSON.stringify(changedValues(r))}`);
  } else if (apply) console.error('nothing stored: the settings in force stay');
  else console.error('dry run: nothing stored (--apply stores the choice)');
  return 0;
}

/** The sources of questions in the order a tune draws them, labelled last (as the local report has them). */
const KIND_ORDER: readonly string[] = [...PSEUDO_KINDS, 'labelled'];
function inKindOrder<T extends object>(byKind: T): T {
  const rank = (k: string) => (KIND_ORDER.includes(k) ? KIND_ORDER.indexOf(k) : KIND_ORDER.length);
  return Object.fromEntries(Object.entries(byKind).sort(([a], [b]) => rank(a) - rank(b))) as T;
}

/**
 * The record as the server sends it, in the order the tune wrote it: the store keeps it as jsonb,
 * which orders an object's keys by length, and the report lists the sources of questions in the
 * order they were drawn. Arrays keep their order; the other objects are read by name.
 */
export function asWritten(r: TuneRecord): TuneRecord {
  const point = <P extends Point>(p: P): P => ({ ...p, byKind: inKindOrder(p.byKind) });
  return {
    ...r,
    questions: inKindOrder(r.questions),
    current: point(r.current),
    defaults: point(r.defaults),
    lexical: point(r.lexical),
    hybrid: point(r.hybrid),
    grid: r.grid.map(point),
  };
}
