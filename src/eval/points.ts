/**
 * `dhr eval --points`: chosen settings scored on one split of a set, a row each, without the
 * protocol's sweeps: how a change of defaults or a tuned point compares with BM25 on the same
 * questions, in minutes where the full protocol takes hours. Same corpus, same exact searches,
 * same judging as the report (the set's target: answer string, else gold document), plus the
 * gold section where the set has them, and how often the right section is first when the right
 * document is (the entity–attribute sets' measure).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MODES, modeDefaults } from '../retrieval/modes';
import { rankingProblem, type RankingLayer } from '../retrieval/parameters';
import type { RequestArguments } from '../retrieval/request-parameters';
import { hitAtK, percentile } from './metrics';
import { runQuestions, type Corpus, type QuestionOutcome, type RunParams } from './run';
import { splitOf, type Split } from './split';
import type { EvalDataset } from './types';

/** A point as given on the command line: a mode (default: the default mode) and ranking parameters; k1 and k2 as the report's. */
/** exact: false searches as the API does (HNSW, the BM25 index, stage 2 by candidates); the eval's default is exact, for reproducible rankings. */
export type PointInput = RankingLayer & Partial<Pick<RequestArguments, 'mode' | 'k1' | 'k2' | 'exact'>>;

export interface PointRow {
  point: string;
  top: { '1': number; '5': number; '20': number };
  document1: number;
  /** Questions with a gold section: the gold section first, among those whose first passage is of a gold document (null: none such). */
  sectionGivenDocument: number | null;
  p50Ms: number;
}

/** A --points value, checked as a question's parameters are (unknown names and out-of-range values refused, naming them). */
export function parsePoint(text: string): PointInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`--points takes a JSON object of ranking parameters, e.g. '{"titleLink":1}'; got ${text}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`--points takes a JSON object, got ${text}`);
  const { mode, k1, k2, exact, ...ranking } = value as Record<string, unknown>;
  if (exact !== undefined && typeof exact !== 'boolean') throw new Error(`--points: exact is true or false, got ${JSON.stringify(exact)}`);
  if (mode !== undefined && !(typeof mode === 'string' && mode in MODES))
    throw new Error(`--points: unknown mode ${JSON.stringify(mode)}; known: ${Object.keys(MODES).join(', ')}`);
  const problem = rankingProblem(ranking as RankingLayer);
  if (problem) throw new Error(`--points: ${problem.message}`);
  return value as PointInput;
}

const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((1000 * n) / of) / 10);

export type PointTarget = 'answer' | 'section' | 'document';

/** A set's target: its answer strings, else its gold sections where every question has one, else its gold documents. */
export const pointTarget = (dataset: EvalDataset): PointTarget =>
  dataset.questions.some((q) => q.answers) ? 'answer' : dataset.questions.every((q) => q.goldSections.length > 0) ? 'section' : 'document';

export function scoreOutcomes(point: string, outcomes: QuestionOutcome[], target: PointTarget): PointRow {
  const ranks = outcomes.map((o) => (target === 'answer' ? (o.answerRank ?? null) : target === 'section' ? (o.sectionRank ?? null) : o.docRank));
  const first = outcomes.filter((o) => o.docRank === 1 && o.sectionRank !== undefined);
  return {
    point,
    top: { '1': hitAtK(ranks, 1) * 100, '5': hitAtK(ranks, 5) * 100, '20': hitAtK(ranks, 20) * 100 },
    document1:
      hitAtK(
        outcomes.map((o) => o.docRank),
        1,
      ) * 100,
    sectionGivenDocument: first.length === 0 ? null : pct(first.filter((o) => o.sectionRank === 1).length, first.length),
    p50Ms: percentile(
      outcomes.map((o) => o.ms),
      50,
    ),
  };
}

export async function scorePoints(
  dataset: EvalDataset,
  corpus: Corpus,
  split: Split,
  points: PointInput[],
  defaults: { k1: number; k2: number },
  log: (line: string) => void,
): Promise<{ rows: PointRow[]; questions: number; target: PointTarget; shapes: ShapeRows[] }> {
  const target = pointTarget(dataset);
  const questions = dataset.questions.filter((q) => splitOf(q.id) === split);
  const rows: PointRow[] = [];
  const byShape = [...new Set(questions.flatMap((q) => (q.shape === undefined ? [] : [q.shape])))].map((shape) => ({
    shape,
    questions: questions.filter((q) => q.shape === shape).length,
    rows: [] as PointRow[],
  }));
  for (const point of points) {
    const { mode = 'HYBRID_HIERARCHICAL', k1 = defaults.k1, k2 = defaults.k2, exact, ...ranking } = point;
    const params: RunParams = { ...modeDefaults(mode), ...ranking, mode, k1, k2, ...(exact === false ? { exact } : {}) } as RunParams;
    const label = JSON.stringify(point);
    log(`  ${label}`);
    const outcomes = await runQuestions(corpus, questions, params);
    rows.push(scoreOutcomes(label, outcomes, target));
    for (const s of byShape) {
      s.rows.push(
        scoreOutcomes(
          label,
          outcomes.filter((_, i) => questions[i].shape === s.shape),
          target,
        ),
      );
    }
  }
  return { rows, questions: questions.length, target, shapes: byShape };
}

/** A question form's rows, a point each (scorePoints' order). */
export interface ShapeRows {
  shape: string;
  questions: number;
  rows: PointRow[];
}

export function pointsMarkdown(dataset: EvalDataset, split: Split, result: Awaited<ReturnType<typeof scorePoints>>, command: string): string {
  const f = (n: number | null) => (n === null ? '–' : n.toFixed(1));
  const lines = [
    `# ${dataset.name}: points on the ${split} split`,
    '',
    `${dataset.description}. ${result.questions} questions of the ${split} split, judged by ${result.target} Top-k; exact search unless a point says \`"exact":false\` (the API's search). Generated by \`${command}\`.`,
    '',
    `| point | Top-1 | Top-5 | Top-20 | document@1 | section first, document first | p50 ms |`,
    '|---|---:|---:|---:|---:|---:|---:|',
    ...result.rows.map(
      (r) =>
        `| \`${r.point}\` | ${f(r.top['1'])} | ${f(r.top['5'])} | ${f(r.top['20'])} | ${f(r.document1)} | ${f(r.sectionGivenDocument)} | ${r.p50Ms.toFixed(0)} |`,
    ),
    '',
  ];
  if (result.shapes.length > 0) {
    lines.push(
      `By question form: Top-5, then the section first among the questions whose document is first, per point.`,
      '',
      `| form | questions | ${result.rows.map((r) => `\`${r.point}\``).join(' | ')} |`,
      `|---|---:|${result.rows.map(() => '---:|').join('')}`,
      ...result.shapes.map((s) => `| ${s.shape} | ${s.questions} | ${s.rows.map((r) => `${f(r.top['5'])} · ${f(r.sectionGivenDocument)}`).join(' | ')} |`),
      '',
    );
  }
  return lines.join('\n');
}

export function writePoints(outDir: string, dataset: EvalDataset, split: Split, markdown: string): string {
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `${dataset.name}-points-${split}.md`);
  writeFileSync(file, markdown);
  return file;
}
