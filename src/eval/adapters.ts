/**
 * The query-side adapter in the evaluation: adapters trained on mined pairs only
 * (no eval labels), on dev-split labels only, and on both, each applied in memory to a copy of the
 * corpus's targets and scored on the test split beside the same mode without one.
 */
import type { AdapterLevel, QueryAdapter } from '../adapters/linear';
import type { HeldOutMetrics } from '../adapters/train';
import { DomainError } from '../errors';
import { trainAdapterMaps } from '../pipeline/adapt';
import { DEFAULT_MODE, type RetrievalMode } from '../retrieval/modes';
import type { PairKind, TrainingPair } from '../training/pair';
import type { EvalOutcome } from './evaluate';
import { labelPairs, type LabelPositives } from './label-pairs';
import { sampleMinedPairs } from './mined-pairs';
import { runQuestions, type Corpus } from './run';
import { scoreOutcomes, type Scores, type Target } from './scores';
import { splitOf } from './split';
import type { EvalDataset } from './types';

export const ADAPTER_RUNS = ['none', 'mined', 'labels', 'both'] as const;
export type AdapterRun = (typeof ADAPTER_RUNS)[number];
export type TrainedRun = Exclude<AdapterRun, 'none'>;

/** The modes the issue names (dense and hybrid, flat and hierarchical) and the product's default. */
export const ADAPTER_MODES: readonly RetrievalMode[] = [...new Set<RetrievalMode>(['HIERARCHICAL', 'FLAT', 'HYBRID', DEFAULT_MODE])];

/** Mined kinds: the link and title-tree kinds; feedback is not in an eval corpus. */
export const MINED_KINDS: readonly PairKind[] = ['dual-link', 'co-mention', 'section-path', 'document-title'];

/** The adapters' goals: Top-20 points over no adapter on the default mode. */
export const ADAPTER_GOALS: ReadonlyArray<{ run: TrainedRun; points: number }> = [
  { run: 'mined', points: 3 },
  { run: 'labels', points: 8 },
];

export interface AdapterOptions {
  /** Mined pairs per kind at most (default 1250: up to 5,000 over the four kinds). */
  minedPerKind?: number;
  /** Candidates read per kind to sample from (default 20 × minedPerKind): bounds mining time on large corpora. */
  minedScanPerKind?: number;
  /** Mining and training seed (default 1). */
  seed?: number;
  log: (line: string) => void;
  /** Sees each adapter's training pairs before it trains (tests check no test question is among them). */
  onPairs?: (run: TrainedRun, pairs: readonly TrainingPair[]) => void;
}

export interface LevelRecord {
  trainPairs: number;
  heldOutPairs: number;
  /** Pairs whose positive had no stored vector. */
  skipped: number;
  epochsRun: number;
  /** 0: no epoch beat the identity, the map is the identity. */
  bestEpoch: number;
  identity: HeldOutMetrics;
  kept: HeldOutMetrics;
  seconds: number;
}

export interface AdapterTraining {
  pairs: number;
  /** Pairs by kind; labelled dev questions count as "dev-label". */
  kinds: Record<string, number>;
  /** Mined: candidates read per kind, of which at most minedPerKind were sampled. */
  scanned?: Partial<Record<PairKind, number>>;
  /** Labels: how positives were chosen. */
  positives?: LabelPositives;
  levels: Partial<Record<AdapterLevel, LevelRecord>>;
  /** Building the pairs (mining or labelling), then training. */
  pairSeconds: number;
  trainSeconds: number;
  /** Set when no adapter came of it (too few pairs): the run is then absent from the scores. */
  notTrained?: string;
}

export interface AdapterEvaluation {
  target: Target;
  modes: RetrievalMode[];
  settings: { minedPerKind: number; minedScanPerKind: number; seed: number; training: string; labels: string };
  /** Dev questions turned into pairs; test questions are never read for training. */
  devQuestions: number;
  testQuestions: number;
  /** Test-split scores per mode and adapter, at the parameters the mode had in the evaluation. */
  scores: Partial<Record<RetrievalMode, Partial<Record<AdapterRun, Scores>>>>;
  training: Partial<Record<TrainedRun, AdapterTraining>>;
  seconds: number;
}

const seconds = (since: bigint) => Math.round(Number(process.hrtime.bigint() - since) / 1e8) / 10;

/** Trains one adapter; a refusal (too few pairs) is a record, not a failed evaluation. */
async function train(corpus: Corpus, run: TrainedRun, pairs: TrainingPair[], record: Omit<AdapterTraining, 'levels' | 'trainSeconds'>, seed: number) {
  const started = process.hrtime.bigint();
  try {
    const trained = await trainAdapterMaps(corpus.db, corpus.targets, pairs, { seed });
    const levels: AdapterTraining['levels'] = {};
    for (const [level, r] of Object.entries(trained.reports) as Array<[AdapterLevel, NonNullable<(typeof trained.reports)[AdapterLevel]>]>) {
      levels[level] = {
        trainPairs: r.pairs.train,
        heldOutPairs: r.pairs.heldOut,
        skipped: r.skipped,
        epochsRun: r.curve.length,
        bestEpoch: r.bestEpoch,
        identity: r.baseline,
        kept: r.bestEpoch === 0 ? r.baseline : r.curve[r.bestEpoch - 1].heldOut,
        seconds: Math.round(r.seconds * 10) / 10,
      };
    }
    const adapter: QueryAdapter = { name: `eval-${run}`, dim: trained.dim, maps: trained.maps };
    return { adapter, record: { ...record, levels, trainSeconds: seconds(started) } };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { adapter: undefined, record: { ...record, levels: {}, trainSeconds: seconds(started), notTrained: error.message } };
  }
}

/**
 * Mines and labels pairs, trains the three adapters at `dhr adapt`'s defaults (both levels), and
 * runs every mode of ADAPTER_MODES on the test split without and with each, at the parameters the
 * evaluation used (`outcome.modeParams`), so the "none" row is the evaluation's own.
 */
export async function evaluateAdapters(
  dataset: EvalDataset,
  corpus: Corpus,
  outcome: Pick<EvalOutcome, 'target' | 'modeParams'>,
  options: AdapterOptions,
): Promise<AdapterEvaluation> {
  const started = process.hrtime.bigint();
  const { log } = options;
  const seed = options.seed ?? 1;
  const minedPerKind = options.minedPerKind ?? 1250;
  const minedScan = options.minedScanPerKind ?? 20 * minedPerKind;
  const dev = dataset.questions.filter((q) => splitOf(q.id) === 'dev');
  const test = dataset.questions.filter((q) => splitOf(q.id) === 'test');

  let t = process.hrtime.bigint();
  const sample = await sampleMinedPairs(corpus.db, MINED_KINDS, { perKind: minedPerKind, scanPerKind: minedScan, seed });
  const mined = sample.pairs;
  const minedSeconds = seconds(t);
  log(`adapters: mined ${mined.length} pairs in ${minedSeconds} s`);
  t = process.hrtime.bigint();
  const labels = await labelPairs(corpus, dev, seed);
  const labelSeconds = seconds(t);
  log(`adapters: ${labels.pairs.length} pairs from ${dev.length} dev questions in ${labelSeconds} s`);

  const kindsOf = (pairs: TrainingPair[], labelled: boolean) => {
    const kinds: Record<string, number> = {};
    for (const p of pairs) {
      const k = labelled && p.kind === 'feedback' ? 'dev-label' : p.kind;
      kinds[k] = (kinds[k] ?? 0) + 1;
    }
    return kinds;
  };
  const sources: Record<TrainedRun, { pairs: TrainingPair[]; record: Omit<AdapterTraining, 'levels' | 'trainSeconds'> }> = {
    mined: { pairs: mined, record: { pairs: mined.length, kinds: kindsOf(mined, false), scanned: sample.scanned, pairSeconds: minedSeconds } },
    labels: {
      pairs: labels.pairs,
      record: { pairs: labels.pairs.length, kinds: kindsOf(labels.pairs, true), positives: labels.positives, pairSeconds: labelSeconds },
    },
    both: {
      pairs: [...mined, ...labels.pairs],
      record: {
        pairs: mined.length + labels.pairs.length,
        kinds: { ...kindsOf(mined, false), ...kindsOf(labels.pairs, true) },
        scanned: sample.scanned,
        positives: labels.positives,
        pairSeconds: Math.round((minedSeconds + labelSeconds) * 10) / 10,
      },
    },
  };
  const adapters: Partial<Record<AdapterRun, QueryAdapter | undefined>> = { none: undefined };
  const training: AdapterEvaluation['training'] = {};
  for (const run of ['mined', 'labels', 'both'] as const) {
    options.onPairs?.(run, sources[run].pairs);
    const { adapter, record } = await train(corpus, run, sources[run].pairs, sources[run].record, seed);
    training[run] = record;
    if (adapter) adapters[run] = adapter;
    log(`adapters: ${run} ${adapter ? `trained in ${record.trainSeconds} s` : `not trained: ${record.notTrained}`}`);
  }

  const scores: AdapterEvaluation['scores'] = {};
  for (const mode of ADAPTER_MODES) {
    const params = outcome.modeParams[mode];
    if (!params) continue;
    const row: Partial<Record<AdapterRun, Scores>> = {};
    for (const run of ADAPTER_RUNS) {
      if (!(run in adapters)) continue;
      // A copy of the targets with the adapter (none: the evaluation's own): the store stays as it is.
      const adapter = adapters[run];
      const targets = adapter ? { ...corpus.targets, adapter, adapterWarning: undefined } : corpus.targets;
      row[run] = scoreOutcomes(await runQuestions({ ...corpus, targets }, test, { mode, ...params }));
    }
    scores[mode] = row;
  }
  return {
    target: outcome.target,
    modes: [...ADAPTER_MODES],
    settings: {
      minedPerKind,
      minedScanPerKind: minedScan,
      seed,
      training: "dhr adapt's defaults (rank 32, InfoNCE, early stopping on 10% held-out pairs, the identity kept if no epoch beats it), both levels",
      labels:
        'dev-split questions only; positive passage: a gold-document passage holding an answer string, the dense top among them (sets without answer strings: the dense top passage of the gold documents); positive document: the gold document',
    },
    devQuestions: dev.length,
    testQuestions: test.length,
    scores,
    training,
    seconds: seconds(started),
  };
}
