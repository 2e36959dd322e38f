import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { badUserInput } from '../errors';
import type { RetrievalMode } from '../retrieval/modes';
import type { Database } from '../store/db';
import type { PseudoKind, PseudoQuestion } from '../tuning/pseudo-questions';
import { applyChoice, changedValues } from '../tuning/runs';
import { BUDGET_RECALL_DEPTH } from '../tuning/budget';
import { tune, type PointScore, type TuneReport } from '../tuning/tune';
import { loadEmbedding } from './embed';
import { onStore } from './answering';
import { ProgressBar } from './progress';

export interface TuneCommandOptions {
  mode?: RetrievalMode;
  perKind?: number;
  seed?: number;
  kinds?: PseudoKind[];
  /** A JSONL file of labelled questions: {"question": "…", "passageIds": [..]} or {"question": "…", "documentKeys": [..]}. */
  questions?: string;
  apply?: boolean;
}

/** Labelled questions from a file: each line a question and the passages (by id) or documents (by key) that answer it. */
async function readLabelled(db: Database, file: string): Promise<PseudoQuestion[]> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim());
  const parsed = lines.flatMap((line, i) => {
    if (!line) return [];
    let row: { question?: unknown; passageIds?: unknown; documentKeys?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      throw badUserInput(`${file} line ${i + 1} is not JSON`, 'questions');
    }
    const ids = Array.isArray(row.passageIds) ? row.passageIds.filter((x): x is number => Number.isInteger(x)) : [];
    const keys = Array.isArray(row.documentKeys) ? row.documentKeys.filter((x): x is string => typeof x === 'string') : [];
    if (typeof row.question !== 'string' || !row.question.trim() || ids.length + keys.length === 0) {
      throw badUserInput(`${file} line ${i + 1} needs a question and passageIds or documentKeys`, 'questions');
    }
    return [{ question: row.question, ids, keys }];
  });
  const allKeys = [...new Set(parsed.flatMap((p) => p.keys))];
  const byKey = new Map(
    (await db.query<{ key: string; id: number }>('SELECT key, id FROM documents WHERE key = ANY($1::text[])', [allKeys])).map((r) => [r.key, r.id]),
  );
  return parsed.map((p) => {
    const passages = new Set(p.ids);
    const documents = new Set(p.keys.map((k) => byKey.get(k)).filter((id): id is number => id !== undefined));
    return { kind: 'feedback' as const, question: p.question, excluded: [], answers: (k) => passages.has(k.passageId) || documents.has(k.documentId) };
  });
}

const pct = (x: number) => (100 * x).toFixed(1);
/** A point's row: its scores, then its MRR@20 per source of questions (in `kinds`' order), so a reader sees which sources carry it. */
const row = (p: PointScore, kinds: readonly (keyof PointScore['byKind'])[], note = '') =>
  `| ${p.mode === 'LEXICAL' || p.mode === 'HYBRID' ? p.mode : p.label} | ${p.mrr.toFixed(3)} | ${pct(p.top1)} | ${pct(p.top20)} | ${kinds.map((k) => p.byKind[k]?.mrr.toFixed(3) ?? '–').join(' / ')} | ${note} |`;

/** The report as Markdown: the questions, the baselines, the grid best first, and the choice. */
export function formatTuneReport(r: TuneReport): string {
  const counts = Object.entries(r.questions)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const total = Object.values(r.questions).reduce((a, b) => a + b, 0);
  const kinds = Object.keys(r.current.byKind) as (keyof PointScore['byKind'])[];
  const lines = [
    `${r.mode}: ${total} questions (${counts})`,
    '',
    `| point | MRR@20 | Top-1 % | Top-20 % | MRR@20 by source (${kinds.join(' / ')}) | |`,
    '|---|---:|---:|---:|---|---|',
    row(r.current, kinds, 'in force'),
    row(r.defaults, kinds, 'built-in defaults'),
    row(r.lexical, kinds, 'baseline'),
    row(r.hybrid, kinds, 'baseline'),
    ...[...r.grid].sort((a, b) => b.mrr - a.mrr).map((p) => row(p, kinds, p === r.choice.chosen ? 'chosen' : '')),
    '',
    `${r.choice.change ? 'change' : 'keep the settings in force'}: ${r.choice.reason}`,
    ...(r.passageBudget ? budgetLines(r) : []),
  ];
  return lines.join('\n');
}

/** Stage 2's passage budget: each budget tried against none, and the choice. */
function budgetLines(r: TuneReport): string[] {
  const b = r.passageBudget!;
  const inForce = r.current.values.passageBudget;
  const head = ['', `Stage 2's passage budget (stage 2 scores about ${b.stage2Passages} passages a question without one; in force: ${inForce ?? 'none'})`];
  if (b.points.length === 0) return [...head, `budget: ${b.reason}`];
  return [
    ...head,
    '',
    `| passageBudget | MRR@20 | recall@${BUDGET_RECALL_DEPTH} % | |`,
    '|---|---:|---:|---|',
    ...b.points.map(
      (p) => `| ${p.values.passageBudget ?? 'none'} | ${p.mrr.toFixed(3)} | ${pct(p.recall)} | ${p.values.passageBudget === b.chosen ? 'chosen' : ''} |`,
    ),
    '',
    `budget ${b.chosen === inForce ? 'stays' : 'changes'}: ${b.reason}`,
  ];
}

/**
 * `dhr tune`: scores a small grid of the mode's parameters on pseudo-questions from the corpus
 * (and labelled ones with --questions) and prints the grid and the choice; with --apply, stores
 * the choice as a new settings version, with the evidence, when it beats the settings in force.
 */
export function tuneCommand(config: Config, o: TuneCommandOptions): Promise<number> {
  return onStore(config, 'tune', async (db) => {
    const labelled = o.questions ? await readLabelled(db, o.questions) : undefined;
    const { models, targets } = await loadEmbedding(db, config);
    try {
      let bar: ProgressBar | undefined;
      const report = await tune(db, targets, {
        mode: o.mode,
        perKind: o.perKind,
        seed: o.seed,
        kinds: o.kinds,
        labelled,
        environment: config.ranking,
        bm25: config.bm25,
        onProgress: (done, total, label) => (bar ??= new ProgressBar(total, 'tune')).update(done, label),
      });
      console.log(formatTuneReport(report));
      // stderr, as the progress: the report itself stays the same from run to run of one store and seed
      console.error(`tune: ${report.pointsRun} points run in ${report.seconds.toFixed(0)} s`);
      const version = o.apply ? await applyChoice(db, report, o.seed ?? 0) : null;
      if (version !== null) {
        console.error(`stored as retrieval settings version ${version}: ${JSON.stringify(changedValues(report))}`);
      } else if (o.apply) console.error('nothing stored: the settings in force stay');
      else console.error('dry run: nothing stored (--apply stores the choice)');
      return 0;
    } finally {
      await models.close();
    }
  });
}
