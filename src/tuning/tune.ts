import { DomainError, ErrorCode } from '../errors';
import { DEFAULT_MODE, MODES, type RetrievalMode } from '../retrieval/modes';
import { resolveRanking, type Ranking, type RankingLayer } from '../retrieval/parameters';
import { retrieve } from '../retrieval/retrieve';
import { corpusSettingsOf } from '../retrieval/settings';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { coverage } from '../store/coverage';
import { exclusively } from '../store/exclusive';
import { currentSettings } from '../store/retrieval-settings';
import type { PassageKey } from '../training/negatives';
import { pseudoQuestions, type PseudoKind, type PseudoQuestion } from './pseudo-questions';
import { chooseSettings, type Choice } from './choose';

/**
 * `dhr tune`: the corpus chooses its own ranking parameters (issue 31 §3). Pseudo-questions from
 * the corpus (pseudo-questions.ts) are run through `retrieve` as the server runs them (HNSW and
 * bounded BM25, not exact search) at each point of a small grid around the mode's defaults, and
 * each point is scored by MRR@k2 of the questions' gold; choose.ts decides whether a point beats
 * the settings in force by enough to replace them.
 */

/** The grid, per parameter: small on purpose (few questions cannot tell finer steps apart). */
export const TUNE_GRID = {
  lambda: [0, 0.25, 0.5, 1, 2],
  alpha: [0.1, 0.3, 0.5, 0.7],
  documentAlpha: [0.3, 0.6, 0.9],
  perDocument: [null, 1, 3],
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
}

export interface PointScore {
  label: string;
  /** The mode and every ranking parameter this point ran with. */
  mode: RetrievalMode;
  values: Ranking;
  /** Mean reciprocal rank of the first gold passage in the top k2 (0 when none). */
  mrr: number;
  top1: number;
  top20: number;
  /** Per question, the reciprocal rank (for the paired comparison). */
  reciprocalRanks: number[];
  /** MRR per source of questions, to compare what each kind of pseudo-question says. */
  byKind: Partial<Record<PseudoKind, { questions: number; mrr: number }>>;
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
}

/** Questions below which the tune refuses: too few to tell points apart. */
export const MIN_TUNE_QUESTIONS = 30;

/** One tune of a store at a time: a second is refused with CONFLICT (two would write two versions from one). */
export function tune(db: Database, targets: EmbeddingTargets, o: TuneOptions = {}): Promise<TuneReport> {
  return exclusively(db, 'tune', 'a tune of the retrieval settings', () => tuneAlone(db, targets, o));
}

async function tuneAlone(db: Database, targets: EmbeddingTargets, o: TuneOptions): Promise<TuneReport> {
  const mode = o.mode ?? DEFAULT_MODE;
  const spec = MODES[mode];
  if (!spec.usesAlpha && !spec.usesLambda) throw new DomainError(ErrorCode.BAD_USER_INPUT, `mode ${mode} has no weights to tune (only the hierarchical and hybrid modes do)`, { argument: 'mode' });
  const { passages } = await coverage(db, { document: targets.document.id, passage: targets.passage.id });
  if (passages.total === 0) throw new DomainError(ErrorCode.BAD_USER_INPUT, 'the store holds no passages: ingest a corpus before tuning it', { argument: 'corpus' });
  if ((spec.needs.passageVector || spec.needs.documentVector) && passages.embedded === 0) {
    throw new DomainError(ErrorCode.BAD_USER_INPUT, `no passage has a vector of ${targets.passage.name} yet: embed the corpus (dhr embed) before tuning it`, { argument: 'corpus' });
  }
  const seed = o.seed ?? 0;
  const mined = await pseudoQuestions(db, { perKind: o.perKind ?? 40, seed, kinds: o.kinds });
  const questions = [...mined.questions, ...(o.labelled ?? [])];
  if (questions.length < MIN_TUNE_QUESTIONS) {
    throw new DomainError(
      ErrorCode.BAD_USER_INPUT,
      `only ${questions.length} pseudo-questions could be drawn from this corpus (at least ${MIN_TUNE_QUESTIONS} are needed): too few documents, sections of one passage, no links`,
      { argument: 'corpus' },
    );
  }
  const k1 = o.k1 ?? 100;
  const k2 = o.k2 ?? 20;
  const environment = o.environment ?? {};
  const corpus = corpusSettingsOf(await currentSettings(db));
  const inForce = resolveRanking(spec.defaults, { corpus: corpus[mode], environment }).values;
  const builtIn = resolveRanking(spec.defaults, {}).values;

  const points = gridPoints(mode, inForce);
  const total = points.length + 4;
  let done = 0;
  const run = async (label: string, runMode: RetrievalMode, values: Ranking): Promise<PointScore> => {
    const score = await scorePoint(db, targets, questions, { label, mode: runMode, values, k1, k2, bm25: o.bm25 });
    o.onProgress?.(++done, total, label);
    return score;
  };
  const current = await run('in force', mode, inForce);
  const defaults = await run('defaults', mode, builtIn);
  const lexical = await run('LEXICAL', 'LEXICAL', resolveRanking(MODES.LEXICAL.defaults, {}).values);
  const hybrid = await run('HYBRID', 'HYBRID', resolveRanking(MODES.HYBRID.defaults, {}).values);
  const grid: PointScore[] = [];
  for (const p of points) grid.push(await run(p.label, mode, p.values));
  const questionCounts = { ...mined.counts, labelled: o.labelled?.length ?? 0 };
  return { mode, questions: questionCounts, current, defaults, lexical, hybrid, grid, choice: chooseSettings({ current, defaults, lexical, grid }) };
}

/**
 * The points: λ × alpha (as the mode uses them), each with the document stage's alpha and the
 * bound on passages per document varied alone around the settings in force. Not a full product:
 * 5 × 4 + 3 + 3 points keep a tune of the demo corpus within minutes.
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
  }
  if (!spec.documentsOnly) {
    for (const perDocument of TUNE_GRID.perDocument) {
      const values = { ...inForce, perDocument };
      out.push({ label: describe(mode, values), values });
    }
  }
  // The same point reached twice (a value in force that is on the grid) runs once.
  const seen = new Set<string>();
  return out.filter((p) => !seen.has(p.label) && seen.add(p.label));
}

export function describe(mode: RetrievalMode, v: Ranking): string {
  const spec = MODES[mode];
  const parts = [
    spec.usesLambda ? `λ ${v.lambda}` : '',
    spec.usesAlpha ? `α ${v.alpha}` : '',
    mode === 'HYBRID_HIERARCHICAL' ? `document α ${v.documentAlpha}` : '',
    `per document ${v.perDocument ?? 'any'}`,
  ];
  return parts.filter(Boolean).join(', ');
}

async function scorePoint(
  db: Database,
  targets: EmbeddingTargets,
  questions: readonly PseudoQuestion[],
  p: { label: string; mode: RetrievalMode; values: Ranking; k1: number; k2: number; bm25?: Partial<Bm25Settings> },
): Promise<PointScore> {
  const reciprocalRanks: number[] = [];
  let top1 = 0;
  let top20 = 0;
  for (const q of questions) {
    const excluded = new Set(q.excluded);
    const result = await retrieve(
      db,
      targets,
      // k2 grows by the excluded passages, so the judged list is still k2 long after they go.
      { question: q.question, mode: p.mode, k1: p.k1, k2: Math.min(1000, p.k2 + excluded.size), ...p.values },
      { bm25: p.bm25, rows: { passages: ['id', 'documentId', 'sectionId', 'titlePath'] } },
    );
    const keys = new Map((result.passageRows ?? []).map((r) => [r.id!, r as PassageKey & { id: number }]));
    const ranked = result.passages.filter((r) => !excluded.has(r.passageId)).slice(0, p.k2);
    const rank = ranked.findIndex((r) => {
      const key = keys.get(r.passageId);
      return key !== undefined && q.answers({ ...key, passageId: r.passageId });
    });
    reciprocalRanks.push(rank < 0 ? 0 : 1 / (rank + 1));
    if (rank === 0) top1 += 1;
    if (rank >= 0 && rank < 20) top20 += 1;
  }
  const n = questions.length;
  const mrr = reciprocalRanks.reduce((a, b) => a + b, 0) / n;
  const byKind: PointScore['byKind'] = {};
  questions.forEach((q, i) => {
    const k = (byKind[q.kind] ??= { questions: 0, mrr: 0 });
    k.questions += 1;
    k.mrr += (reciprocalRanks[i] - k.mrr) / k.questions; // running mean
  });
  return { label: p.label, mode: p.mode, values: p.values, mrr, top1: top1 / n, top20: top20 / n, reciprocalRanks, byKind };
}
