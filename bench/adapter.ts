/**
 * npm run bench:adapter — training time and memory of the query-side adapter (src/adapters/train.ts)
 * at the issue's size: 20,000 pairs × 512-d, on this machine's cores (the trainer is one thread).
 *
 * Data (seeded): BENCH_TARGETS unit target vectors in clusters of 10; each pair's question is its
 * positive through a fixed linear distortion (neighbouring coordinates of the first half swapped,
 * every coordinate scaled) plus noise, so there is something to learn; 8 hard negatives per pair from the positive's cluster (the product's default
 * negativesPerPair). The trainer sees only these arrays, as `dhr adapt` hands it the vectors it
 * read from the store: memory is the pairs' vectors plus the map's d² parameters (W, its gradient,
 * Adam's two moments), whatever the corpus size.
 *
 * Baseline in the same run: one epoch of plain dot products over the same batches — each question
 * against its in-batch positives and hard negatives, no map, no gradient, no update (what scoring
 * the training objective with the identity costs). The ratio is one training epoch to that.
 *   BENCH_PAIRS (20000)  BENCH_DIM (512)  BENCH_TARGETS (20000)  BENCH_EPOCHS (10)  BENCH_SEED (1)
 *   BENCH_BATCH (64)  BENCH_LR (the trainer's default)  BENCH_RANK (0: full W; r: diag + rank-r)  BENCH_JSON=path
 */
import { loadavg, cpus } from 'node:os';
import { writeFileSync } from 'node:fs';
import { TRAIN_DEFAULTS, trainLinearMap, type TrainingData } from '../src/adapters/train';
import { prng } from '../test/helpers/prng';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PAIRS = env('BENCH_PAIRS', 20_000);
const DIM = env('BENCH_DIM', 512);
const TARGETS = env('BENCH_TARGETS', 20_000);
const EPOCHS = env('BENCH_EPOCHS', TRAIN_DEFAULTS.epochs);
const SEED = env('BENCH_SEED', 1);
const BATCH = env('BENCH_BATCH', TRAIN_DEFAULTS.batchSize);
const LR = env('BENCH_LR', TRAIN_DEFAULTS.lr);
const RANK = env('BENCH_RANK', TRAIN_DEFAULTS.rank);
const K = 8;

function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

function normalizeRow(a: Float32Array, row: number, d: number): void {
  let s = 0;
  for (let i = 0; i < d; i++) s += a[row * d + i] ** 2;
  const n = Math.sqrt(s);
  for (let i = 0; i < d; i++) a[row * d + i] /= n;
}

function makeData(): TrainingData {
  const rand = prng(SEED);
  const d = DIM;
  const targets = new Float32Array(TARGETS * d);
  const centre = new Float32Array(d);
  for (let t = 0; t < TARGETS; t++) {
    if (t % 10 === 0) for (let i = 0; i < d; i++) centre[i] = gaussian(rand);
    for (let i = 0; i < d; i++) targets[t * d + i] = centre[i] + 0.3 * gaussian(rand);
    normalizeRow(targets, t, d);
  }
  // The distortion: swap neighbouring coordinates in the first half, scale every coordinate.
  const from = Int32Array.from({ length: d }, (_, i) => (i < d / 2 ? i ^ 1 : i));
  const scale = Float32Array.from({ length: d }, () => Math.exp(gaussian(rand) * 0.5));
  const questions = new Float32Array(PAIRS * d);
  const positives = new Int32Array(PAIRS);
  const negatives = new Int32Array(PAIRS * K);
  for (let p = 0; p < PAIRS; p++) {
    const t = Math.floor(rand() * TARGETS);
    positives[p] = t;
    for (let i = 0; i < d; i++) questions[p * d + i] = scale[i] * targets[t * d + from[i]] + 0.02 * gaussian(rand);
    normalizeRow(questions, p, d);
    const first = t - (t % 10);
    for (let h = 0; h < K; h++) negatives[p * K + h] = first + ((t - first + 1 + h) % 10);
  }
  return { dim: d, questions, positives, negatives, negativesPerPair: K, targets };
}

/** The baseline: one epoch's candidate scoring with plain dot products (identity map, no gradient). */
function dotProductEpoch(data: TrainingData): number {
  const d = data.dim;
  let checksum = 0;
  for (let start = 0; start < PAIRS; start += BATCH) {
    const end = Math.min(PAIRS, start + BATCH);
    for (let i = start; i < end; i++) {
      const scoreAgainst = (t: number) => {
        let s = 0;
        for (let c = 0; c < d; c++) s += data.questions[i * d + c] * data.targets[t * d + c];
        return s;
      };
      for (let j = start; j < end; j++) checksum += scoreAgainst(data.positives[j]);
      for (let h = 0; h < K; h++) checksum += scoreAgainst(data.negatives[i * K + h]);
    }
  }
  return checksum;
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

function main(): void {
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.log(
    `bench:adapter — ${PAIRS} pairs × ${DIM}-d, ${TARGETS} targets, ${K} hard negatives, batch ${BATCH}, ≤ ${EPOCHS} epochs, lr ${LR}, W ${RANK > 0 && RANK < DIM ? `diag + rank ${RANK}` : 'full'}`,
  );
  console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average before: ${load}`);
  const rssStart = process.memoryUsage().rss;
  const data = makeData();
  const dataBytes = data.questions.byteLength + data.targets.byteLength + data.positives.byteLength + data.negatives.byteLength;
  const t0 = process.hrtime.bigint();
  const checksum = dotProductEpoch(data);
  const baselineS = Number(process.hrtime.bigint() - t0) / 1e9;
  let epochStarted = process.hrtime.bigint();
  const epochSeconds: number[] = [];
  const t1 = process.hrtime.bigint();
  const result = trainLinearMap(data, {
    epochs: EPOCHS,
    batchSize: BATCH,
    lr: LR,
    rank: RANK,
    seed: SEED,
    onEpoch: (r) => {
      const s = Number(process.hrtime.bigint() - epochStarted) / 1e9;
      epochSeconds.push(s);
      epochStarted = process.hrtime.bigint();
      console.log(
        `  epoch ${r.epoch}: ${s.toFixed(1)} s, train loss ${r.trainLoss.toFixed(3)}, held-out loss ${r.heldOut.loss.toFixed(3)}, recall@1 ${r.heldOut.accuracy.toFixed(3)}`,
      );
    },
  });
  const trainS = Number(process.hrtime.bigint() - t1) / 1e9;
  const maxRss = process.resourceUsage().maxRSS * 1024;
  const perEpoch = epochSeconds.reduce((a, b) => a + b, 0) / epochSeconds.length;
  const summary = {
    rank: RANK,
    lr: LR,
    pairs: PAIRS,
    dim: DIM,
    targets: TARGETS,
    epochsRun: result.curve.length,
    bestEpoch: result.bestEpoch,
    baselineRecallAt1: result.baseline.accuracy,
    recallAt1: result.bestEpoch ? result.curve[result.bestEpoch - 1].heldOut.accuracy : result.baseline.accuracy,
    trainSeconds: trainS,
    secondsPerEpoch: perEpoch,
    dotProductEpochSeconds: baselineS,
    epochToDotProductRatio: perEpoch / baselineS,
    dataMiB: Number(mib(dataBytes)),
    rssAtStartMiB: Number(mib(rssStart)),
    peakRssMiB: Number(mib(maxRss)),
    loadAverageBefore: load,
    loadAverageAfter: loadavg()
      .map((x) => x.toFixed(2))
      .join(' '),
    checksum,
  };
  console.log(
    `train: ${trainS.toFixed(1)} s for ${result.curve.length} epochs (${perEpoch.toFixed(1)} s/epoch; best epoch ${result.bestEpoch}); ` +
      `held-out recall@1 ${summary.baselineRecallAt1.toFixed(3)} → ${summary.recallAt1.toFixed(3)}`,
  );
  console.log(`baseline: one epoch of plain dot products ${baselineS.toFixed(2)} s; a training epoch is ${summary.epochToDotProductRatio.toFixed(1)}× that`);
  console.log(`memory: training arrays ${summary.dataMiB} MiB, RSS at start ${summary.rssAtStartMiB} MiB, peak RSS ${summary.peakRssMiB} MiB`);
  console.log(`load average after: ${summary.loadAverageAfter}`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(summary, null, 2));
}

main();
