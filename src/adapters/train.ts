import { badUserInput } from '../errors';
import { norm, type LinearMap } from './linear';
import { seeded, shuffle } from './random';

/**
 * What one level trains on, all frozen vectors in flat typed arrays. Targets (positives and hard
 * negatives) are stored once each and referred to by row, so memory grows with the distinct
 * vectors the pairs name, not with the corpus.
 */
export interface TrainingData {
  dim: number;
  /** n question vectors, row-major. */
  questions: Float32Array;
  /** Row in `targets` of each question's positive. */
  positives: Int32Array;
  /** n × negativesPerPair rows in `targets` (hard negatives); -1 where a pair has fewer. */
  negatives: Int32Array;
  negativesPerPair: number;
  /** m target vectors, row-major. */
  targets: Float32Array;
}

export interface TrainOptions {
  epochs?: number;
  /** Adam's step size. */
  lr?: number;
  /** Softmax temperature of the InfoNCE loss. */
  temperature?: number;
  /** Weight of ‖W‖² + ‖b‖²: pulls the map toward the identity. */
  l2?: number;
  batchSize?: number;
  /** Fraction of pairs kept out of training to early-stop on and report. */
  holdout?: number;
  /** Epochs without a better held-out loss before training stops. */
  patience?: number;
  seed?: number;
  /** Fewer pairs than this are refused: a map of d² weights needs data. */
  minPairs?: number;
  /** Called after each batch (progress bars). */
  onBatch?: (done: number, total: number) => void;
  onEpoch?: (record: EpochRecord) => void;
}

export const TRAIN_DEFAULTS = {
  epochs: 10,
  lr: 1e-4,
  temperature: 0.05,
  l2: 1e-4,
  batchSize: 64,
  holdout: 0.1,
  patience: 2,
  seed: 1,
  minPairs: 20,
} as const;

export interface HeldOutMetrics {
  /** Mean InfoNCE loss over the held-out pairs. */
  loss: number;
  /** Share of held-out pairs whose positive outranks every candidate (recall@1). */
  accuracy: number;
}

export interface EpochRecord {
  epoch: number;
  trainLoss: number;
  heldOut: HeldOutMetrics;
}

export interface TrainResult {
  map: LinearMap;
  /** Held-out metrics of the identity map (today's scores), for comparison. */
  baseline: HeldOutMetrics;
  curve: EpochRecord[];
  /** The epoch whose map was kept (0: none beat the identity). */
  bestEpoch: number;
  pairs: { train: number; heldOut: number };
  settings: Required<Omit<TrainOptions, 'onBatch' | 'onEpoch'>>;
}

/** Held-out pairs are scored in chunks of this many: in-chunk positives plus hard negatives are the candidates. */
const EVAL_CHUNK = 256;

/**
 * Trains q' = q + Wq + b (rescaled to ‖q‖) with InfoNCE: each question's positive against the
 * other positives of its mini-batch (in-batch negatives; pairs sharing the positive are masked)
 * and its own hard negatives, at a temperature; Adam; seeded shuffles; early stopping on a
 * held-out fraction. Keeps the map of the best held-out loss, the identity if none beat it.
 */
export function trainLinearMap(data: TrainingData, options: TrainOptions = {}): TrainResult {
  const settings = {
    epochs: options.epochs ?? TRAIN_DEFAULTS.epochs,
    lr: options.lr ?? TRAIN_DEFAULTS.lr,
    temperature: options.temperature ?? TRAIN_DEFAULTS.temperature,
    l2: options.l2 ?? TRAIN_DEFAULTS.l2,
    batchSize: options.batchSize ?? TRAIN_DEFAULTS.batchSize,
    holdout: options.holdout ?? TRAIN_DEFAULTS.holdout,
    patience: options.patience ?? TRAIN_DEFAULTS.patience,
    seed: options.seed ?? TRAIN_DEFAULTS.seed,
    minPairs: options.minPairs ?? TRAIN_DEFAULTS.minPairs,
  };
  checkSettings(settings);
  const d = data.dim;
  const n = data.positives.length;
  if (n < settings.minPairs) {
    throw badUserInput(`${n} training pairs are too few to train a ${d}×${d} adapter; give at least ${settings.minPairs}`, 'pairs');
  }
  checkData(data);
  const rand = seeded(settings.seed);
  const order = shuffle(Int32Array.from({ length: n }, (_, i) => i), rand);
  const heldOutCount = Math.max(1, Math.round(n * settings.holdout));
  const heldOut = order.slice(0, heldOutCount);
  const train = order.slice(heldOutCount);

  const model = new Model(d);
  const baseline = evaluate(model, data, heldOut, settings.temperature);
  let best = { loss: baseline.loss, epoch: 0, w: model.w.slice(), b: model.b.slice() };
  const curve: EpochRecord[] = [];
  const batches = Math.ceil(train.length / settings.batchSize);
  const adam = new Adam(d * d + d, settings.lr);
  let stale = 0;
  for (let epoch = 1; epoch <= settings.epochs; epoch++) {
    shuffle(train, rand);
    let lossSum = 0;
    for (let k = 0; k < batches; k++) {
      const batch = train.subarray(k * settings.batchSize, (k + 1) * settings.batchSize);
      model.zeroGrad();
      lossSum += model.forwardBackward(data, batch, settings.temperature, true) * batch.length;
      model.addL2(settings.l2);
      adam.step(model);
      options.onBatch?.((epoch - 1) * batches + k + 1, settings.epochs * batches);
    }
    const record = { epoch, trainLoss: lossSum / train.length, heldOut: evaluate(model, data, heldOut, settings.temperature) };
    curve.push(record);
    options.onEpoch?.(record);
    if (record.heldOut.loss < best.loss) {
      best = { loss: record.heldOut.loss, epoch, w: model.w.slice(), b: model.b.slice() };
      stale = 0;
    } else if (++stale >= settings.patience) {
      break;
    }
  }
  return {
    map: { dim: d, w: Float32Array.from(best.w), b: Float32Array.from(best.b) },
    baseline,
    curve,
    bestEpoch: best.epoch,
    pairs: { train: train.length, heldOut: heldOut.length },
    settings,
  };
}

function checkSettings(s: Required<Omit<TrainOptions, 'onBatch' | 'onEpoch'>>): void {
  const positive = (v: number) => Number.isFinite(v) && v > 0;
  if (!Number.isInteger(s.epochs) || s.epochs < 1) throw badUserInput('epochs must be a whole number ≥ 1', 'epochs');
  if (!positive(s.lr)) throw badUserInput('lr must be a number > 0', 'lr');
  if (!positive(s.temperature)) throw badUserInput('temperature must be a number > 0', 'temperature');
  if (!Number.isFinite(s.l2) || s.l2 < 0) throw badUserInput('l2 must be a number ≥ 0', 'l2');
  if (!Number.isInteger(s.batchSize) || s.batchSize < 2) throw badUserInput('batchSize must be a whole number ≥ 2', 'batchSize');
  if (!(s.holdout > 0 && s.holdout < 1)) throw badUserInput('holdout must be a fraction between 0 and 1 (exclusive)', 'holdout');
  if (!Number.isInteger(s.patience) || s.patience < 1) throw badUserInput('patience must be a whole number ≥ 1', 'patience');
  if (!Number.isInteger(s.seed)) throw badUserInput('seed must be a whole number', 'seed');
}

function checkData(data: TrainingData): void {
  const { dim: d, positives, negatives, negativesPerPair: k } = data;
  const m = data.targets.length / d;
  if (data.questions.length !== positives.length * d || !Number.isInteger(m) || negatives.length !== positives.length * k) {
    throw badUserInput(`training arrays do not agree with dimension ${d}`, 'pairs');
  }
  for (const row of positives) if (row < 0 || row >= m) throw badUserInput(`positive row ${row} is outside the ${m} targets`, 'pairs');
  for (const row of negatives) if (row >= m) throw badUserInput(`negative row ${row} is outside the ${m} targets`, 'pairs');
}

/** The map's parameters (float64 while training), their gradients and one batch's work. */
class Model {
  readonly w: Float64Array;
  readonly b: Float64Array;
  readonly gw: Float64Array;
  readonly gb: Float64Array;

  constructor(readonly d: number) {
    this.w = new Float64Array(d * d);
    this.b = new Float64Array(d);
    this.gw = new Float64Array(d * d);
    this.gb = new Float64Array(d);
  }

  zeroGrad(): void {
    this.gw.fill(0);
    this.gb.fill(0);
  }

  addL2(l2: number): void {
    if (l2 === 0) return;
    for (let i = 0; i < this.w.length; i++) this.gw[i] += 2 * l2 * this.w[i];
    for (let i = 0; i < this.b.length; i++) this.gb[i] += 2 * l2 * this.b[i];
  }

  /**
   * Mean InfoNCE loss of a batch; with `grad`, adds its gradient to gw, gb. Returns the loss and
   * (through `hits`) how many positives ranked first.
   */
  forwardBackward(data: TrainingData, batch: Int32Array, temperature: number, grad: boolean, hits?: { n: number }): number {
    const d = this.d;
    const B = batch.length;
    const T = data.targets;
    // The batch's questions as one B×d block, so W's rows are read once per batch (cache-resident).
    const q = new Float64Array(B * d);
    for (let i = 0; i < B; i++) for (let c = 0, qo = batch[i] * d; c < d; c++) q[i * d + c] = data.questions[qo + c];
    const u = new Float64Array(B * d);
    const scale = new Float64Array(B);
    // Forward: z = q + Wq + b (row by row of W over the whole batch), then u = z·‖q‖/‖z‖.
    for (let r = 0; r < d; r++) {
      const row = r * d;
      for (let i = 0; i < B; i++) u[i * d + r] = q[i * d + r] + dot64(this.w, row, q, i * d, d) + this.b[r];
    }
    for (let i = 0; i < B; i++) {
      const zn = norm(u, i * d, d);
      scale[i] = zn === 0 ? 1 : norm(q, i * d, d) / zn;
      for (let r = 0; r < d; r++) u[i * d + r] *= scale[i];
    }
    const k = data.negativesPerPair;
    const candidates: number[] = [];
    const logits: number[] = [];
    // ∂loss/∂z per question, B×d: W's gradient is then one pass over W (Σ_i g_i q_iᵀ).
    const gz = grad ? new Float64Array(B * d) : undefined;
    const gu = new Float64Array(d);
    let loss = 0;
    for (let i = 0; i < B; i++) {
      const pair = batch[i];
      const positive = data.positives[pair];
      // Candidates: the positive first, other batch positives (not the same target), hard negatives.
      candidates.length = 0;
      candidates.push(positive);
      for (let j = 0; j < B; j++) {
        const other = data.positives[batch[j]];
        if (j !== i && other !== positive && !candidates.includes(other)) candidates.push(other);
      }
      for (let h = 0; h < k; h++) {
        const neg = data.negatives[pair * k + h];
        if (neg >= 0 && neg !== positive && !candidates.includes(neg)) candidates.push(neg);
      }
      const uo = i * d;
      logits.length = 0;
      let max = -Infinity;
      for (const t of candidates) {
        const l = dot32(T, t * d, u, uo, d) / temperature;
        logits.push(l);
        if (l > max) max = l;
      }
      let sum = 0;
      for (let c = 0; c < logits.length; c++) sum += Math.exp(logits[c] - max);
      loss += Math.log(sum) + max - logits[0];
      if (hits && logits.every((l, c) => c === 0 || l < logits[0])) hits.n++;
      if (!gz) continue;
      // ∂loss/∂u = Σ (p_c − [c = positive]) t_c / τ, averaged over the batch.
      gu.fill(0);
      for (let c = 0; c < candidates.length; c++) {
        const f = (Math.exp(logits[c] - max) / sum - (c === 0 ? 1 : 0)) / temperature / B;
        axpy32(gu, f, T, candidates[c] * d, d);
      }
      // Through the rescale: ∂u/∂z = (‖q‖/‖z‖)(I − ẑẑᵀ), and ẑ = u/‖u‖.
      const un = norm(u, uo, d);
      const dotUG = dot64(u, uo, gu, 0, d);
      for (let r = 0; r < d; r++) {
        const g = scale[i] * (gu[r] - (u[uo + r] * dotUG) / (un * un || 1));
        gz[uo + r] = g;
        this.gb[r] += g;
      }
    }
    if (gz) {
      // gW[r, :] += Σ_i gz[i, r] · q_i: one row of gW stays in cache while the batch streams by.
      for (let r = 0; r < d; r++) {
        const row = r * d;
        for (let i = 0; i < B; i++) {
          const g = gz[i * d + r];
          if (g !== 0) axpyAt(this.gw, row, g, q, i * d, d);
        }
      }
    }
    return loss / B;
  }
}

/*
 * The inner loops, unrolled by four. One function per pair of array types: V8 compiles a loop
 * over one typed-array kind much faster than one that sees both (measured: 2.5× on this trainer).
 */
function dot64(a: Float64Array, ao: number, b: Float64Array, bo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let x = 0;
  for (; x + 3 < n; x += 4) {
    s0 += a[ao + x] * b[bo + x];
    s1 += a[ao + x + 1] * b[bo + x + 1];
    s2 += a[ao + x + 2] * b[bo + x + 2];
    s3 += a[ao + x + 3] * b[bo + x + 3];
  }
  for (; x < n; x++) s0 += a[ao + x] * b[bo + x];
  return s0 + s1 + s2 + s3;
}

function dot32(a: Float32Array, ao: number, b: Float64Array, bo: number, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let x = 0;
  for (; x + 3 < n; x += 4) {
    s0 += a[ao + x] * b[bo + x];
    s1 += a[ao + x + 1] * b[bo + x + 1];
    s2 += a[ao + x + 2] * b[bo + x + 2];
    s3 += a[ao + x + 3] * b[bo + x + 3];
  }
  for (; x < n; x++) s0 += a[ao + x] * b[bo + x];
  return s0 + s1 + s2 + s3;
}

/** y[x] += g·v[vo + x] for x < n (v float32: a target vector). */
function axpy32(y: Float64Array, g: number, v: Float32Array, vo: number, n: number): void {
  let x = 0;
  for (; x + 3 < n; x += 4) {
    y[x] += g * v[vo + x];
    y[x + 1] += g * v[vo + x + 1];
    y[x + 2] += g * v[vo + x + 2];
    y[x + 3] += g * v[vo + x + 3];
  }
  for (; x < n; x++) y[x] += g * v[vo + x];
}

/** y[yo + x] += g·v[vo + x] for x < n. */
function axpyAt(y: Float64Array, yo: number, g: number, v: Float64Array, vo: number, n: number): void {
  let x = 0;
  for (; x + 3 < n; x += 4) {
    y[yo + x] += g * v[vo + x];
    y[yo + x + 1] += g * v[vo + x + 1];
    y[yo + x + 2] += g * v[vo + x + 2];
    y[yo + x + 3] += g * v[vo + x + 3];
  }
  for (; x < n; x++) y[yo + x] += g * v[vo + x];
}

function evaluate(model: Model, data: TrainingData, pairs: Int32Array, temperature: number): HeldOutMetrics {
  const hits = { n: 0 };
  let loss = 0;
  for (let k = 0; k < pairs.length; k += EVAL_CHUNK) {
    const chunk = pairs.subarray(k, k + EVAL_CHUNK);
    loss += model.forwardBackward(data, chunk, temperature, false, hits) * chunk.length;
  }
  return { loss: loss / pairs.length, accuracy: hits.n / pairs.length };
}

/** Adam (Kingma & Ba) over W and b as one parameter vector. */
class Adam {
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;

  constructor(
    size: number,
    private readonly lr: number,
    private readonly beta1 = 0.9,
    private readonly beta2 = 0.999,
    private readonly eps = 1e-8,
  ) {
    this.m = new Float64Array(size);
    this.v = new Float64Array(size);
  }

  step(model: Model): void {
    this.t++;
    const c1 = 1 - this.beta1 ** this.t;
    const c2 = 1 - this.beta2 ** this.t;
    const nw = model.w.length;
    const update = (param: Float64Array, grad: Float64Array, offset: number) => {
      for (let i = 0; i < param.length; i++) {
        const g = grad[i];
        const j = offset + i;
        this.m[j] = this.beta1 * this.m[j] + (1 - this.beta1) * g;
        this.v[j] = this.beta2 * this.v[j] + (1 - this.beta2) * g * g;
        param[i] -= (this.lr * (this.m[j] / c1)) / (Math.sqrt(this.v[j] / c2) + this.eps);
      }
    };
    update(model.w, model.gw, 0);
    update(model.b, model.gb, nw);
  }
}
