import { badUserInput } from '../errors';
import { identityMap, norm, type LinearMap } from './linear';
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
  /** Weight of the squared parameters (‖W‖² + ‖b‖² for the full map): pulls the map toward the identity. */
  l2?: number;
  batchSize?: number;
  /** Fraction of pairs kept out of training to early-stop on and report. */
  holdout?: number;
  /** Epochs without a better held-out loss before training stops. */
  patience?: number;
  seed?: number;
  /** Fewer pairs than this are refused: a map of d² weights needs data. */
  minPairs?: number;
  /** r < d: W = diag(s) + U Vᵀ with U, V of d×r (faster, fewer parameters); 0 or r ≥ d: the full d×d W. */
  rank?: number;
  /** Called after each batch (progress bars). */
  onBatch?: (done: number, total: number) => void;
  onEpoch?: (record: EpochRecord) => void;
}

export const TRAIN_DEFAULTS = {
  epochs: 10,
  lr: 1e-3,
  temperature: 0.05,
  l2: 1e-4,
  batchSize: 64,
  holdout: 0.1,
  patience: 2,
  seed: 1,
  minPairs: 20,
  // bench:adapter, 20,000 pairs × 512-d: rank 32 trained 5× faster than the full W and reached a
  // better held-out loss in 10 epochs; a rank ≥ d trains the full W.
  rank: 32,
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
 * W is the full d×d matrix, or diag(s) + U Vᵀ at `rank` < d; either way the result is the full W.
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
    rank: options.rank ?? TRAIN_DEFAULTS.rank,
  };
  checkSettings(settings);
  const d = data.dim;
  const n = data.positives.length;
  if (n < settings.minPairs) {
    throw badUserInput(`${n} training pairs are too few to train a ${d}×${d} adapter; give at least ${settings.minPairs}`, 'pairs');
  }
  checkData(data);
  const rand = seeded(settings.seed);
  const order = shuffle(
    Int32Array.from({ length: n }, (_, i) => i),
    rand,
  );
  const heldOutCount = Math.max(1, Math.round(n * settings.holdout));
  const heldOut = order.slice(0, heldOutCount);
  const train = order.slice(heldOutCount);

  const model: Parameters = settings.rank > 0 && settings.rank < d ? new LowRankParameters(d, settings.rank, rand) : new FullParameters(d);
  const baseline = evaluate(model, data, heldOut, settings.temperature);
  let best = { loss: baseline.loss, epoch: 0, map: identityMap(d) };
  const curve: EpochRecord[] = [];
  const batches = Math.ceil(train.length / settings.batchSize);
  const adam = new Adam(model, settings.lr, settings.l2);
  let stale = 0;
  for (let epoch = 1; epoch <= settings.epochs; epoch++) {
    shuffle(train, rand);
    let lossSum = 0;
    for (let k = 0; k < batches; k++) {
      const batch = train.subarray(k * settings.batchSize, (k + 1) * settings.batchSize);
      adam.zeroGrad();
      lossSum += batchLoss(model, data, batch, settings.temperature, true) * batch.length;
      adam.step();
      options.onBatch?.((epoch - 1) * batches + k + 1, settings.epochs * batches);
    }
    const record = { epoch, trainLoss: lossSum / train.length, heldOut: evaluate(model, data, heldOut, settings.temperature) };
    curve.push(record);
    options.onEpoch?.(record);
    if (record.heldOut.loss < best.loss) {
      best = { loss: record.heldOut.loss, epoch, map: model.toMap() };
      stale = 0;
    } else if (++stale >= settings.patience) {
      break;
    }
  }
  return {
    map: best.map,
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
  if (!Number.isInteger(s.rank) || s.rank < 0) throw badUserInput('rank must be a whole number ≥ 0 (0: full)', 'rank');
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

/**
 * How W is parameterised while training (float64), its gradients, and the two passes over a
 * batch that depend on it; the loss in between is shared (infoNCE).
 */
interface Parameters {
  readonly d: number;
  /** Every parameter array and its gradient, in the same order (Adam walks them). */
  readonly params: Float64Array[];
  readonly grads: Float64Array[];
  /** z_i = q_i + W q_i + b for the batch's B×d question block. */
  forward(q: Float64Array, B: number, z: Float64Array): void;
  /** Adds the gradient of the batch loss, given ∂loss/∂z (B×d). */
  backward(q: Float64Array, B: number, gz: Float64Array): void;
  /** W and b as a map (what is stored). */
  toMap(): LinearMap;
}

/** The full d×d W: 2·d² multiply-adds per pair and pass. */
class FullParameters implements Parameters {
  readonly w: Float64Array;
  readonly b: Float64Array;
  readonly params: Float64Array[];
  readonly grads: Float64Array[];

  constructor(readonly d: number) {
    this.w = new Float64Array(d * d);
    this.b = new Float64Array(d);
    this.params = [this.w, this.b];
    this.grads = [new Float64Array(d * d), new Float64Array(d)];
  }

  forward(q: Float64Array, B: number, z: Float64Array): void {
    const d = this.d;
    // Row by row of W over the whole batch: each row is read once per batch, from cache.
    for (let r = 0; r < d; r++) {
      const row = r * d;
      for (let i = 0; i < B; i++) z[i * d + r] = q[i * d + r] + dot64(this.w, row, q, i * d, d) + this.b[r];
    }
  }

  backward(q: Float64Array, B: number, gz: Float64Array): void {
    const d = this.d;
    const [gw, gb] = this.grads;
    // gW[r, :] += Σ_i gz[i, r] · q_i: one row of gW stays in cache while the batch streams by.
    for (let r = 0; r < d; r++) {
      const row = r * d;
      for (let i = 0; i < B; i++) {
        const g = gz[i * d + r];
        if (g === 0) continue;
        axpy64(gw, row, g, q, i * d, d);
        gb[r] += g;
      }
    }
  }

  toMap(): LinearMap {
    return { dim: this.d, w: Float32Array.from(this.w), b: Float32Array.from(this.b) };
  }
}

/**
 * W = diag(s) + U Vᵀ with U, V of d×r (LoRA-style): about 6·r·d multiply-adds per pair instead of
 * 2·d², and far fewer parameters to fit from few pairs. U starts at zero and V small and random,
 * so W starts at zero (the identity map) yet U gets a gradient from the first step.
 */
class LowRankParameters implements Parameters {
  readonly s: Float64Array;
  /** U, d×r row-major. */
  readonly u: Float64Array;
  /** Vᵀ, r×d row-major. */
  readonly vt: Float64Array;
  readonly b: Float64Array;
  readonly params: Float64Array[];
  readonly grads: Float64Array[];
  private h = new Float64Array(0);

  constructor(
    readonly d: number,
    readonly r: number,
    rand: () => number,
  ) {
    this.s = new Float64Array(d);
    this.u = new Float64Array(d * r);
    this.vt = Float64Array.from({ length: r * d }, () => (rand() - 0.5) * (2 / Math.sqrt(d)));
    this.b = new Float64Array(d);
    this.params = [this.s, this.u, this.vt, this.b];
    this.grads = this.params.map((p) => new Float64Array(p.length));
  }

  forward(q: Float64Array, B: number, z: Float64Array): void {
    const { d, r } = this;
    if (this.h.length < B * r) this.h = new Float64Array(B * r);
    const h = this.h;
    for (let i = 0; i < B; i++) {
      for (let k = 0; k < r; k++) h[i * r + k] = dot64(this.vt, k * d, q, i * d, d);
      for (let x = 0; x < d; x++) z[i * d + x] = q[i * d + x] * (1 + this.s[x]) + dot64(this.u, x * r, h, i * r, r) + this.b[x];
    }
  }

  backward(q: Float64Array, B: number, gz: Float64Array): void {
    const { d, r } = this;
    const [gs, gu, gvt, gb] = this.grads;
    const h = this.h;
    const gh = new Float64Array(r);
    for (let i = 0; i < B; i++) {
      gh.fill(0);
      for (let x = 0; x < d; x++) {
        const g = gz[i * d + x];
        if (g === 0) continue;
        gs[x] += g * q[i * d + x];
        gb[x] += g;
        axpy64(gu, x * r, g, h, i * r, r);
        for (let k = 0; k < r; k++) gh[k] += g * this.u[x * r + k];
      }
      for (let k = 0; k < r; k++) if (gh[k] !== 0) axpy64(gvt, k * d, gh[k], q, i * d, d);
    }
  }

  toMap(): LinearMap {
    const { d, r } = this;
    const w = new Float32Array(d * d);
    for (let x = 0; x < d; x++) {
      for (let c = 0; c < d; c++) {
        let v = x === c ? this.s[x] : 0;
        for (let k = 0; k < r; k++) v += this.u[x * r + k] * this.vt[k * d + c];
        w[x * d + c] = v;
      }
    }
    return { dim: d, w, b: Float32Array.from(this.b) };
  }
}

/**
 * Mean InfoNCE loss of a batch through the map; with `grad`, adds its gradient to the
 * parameters' gradients. Counts, in `hits`, the positives that ranked first.
 */
function batchLoss(model: Parameters, data: TrainingData, batch: Int32Array, temperature: number, grad: boolean, hits?: { n: number }): number {
  const d = model.d;
  const B = batch.length;
  const T = data.targets;
  const q = new Float64Array(B * d);
  for (let i = 0; i < B; i++) for (let c = 0, qo = batch[i] * d; c < d; c++) q[i * d + c] = data.questions[qo + c];
  // Forward: z = q + Wq + b, then u = z·‖q‖/‖z‖.
  const u = new Float64Array(B * d);
  model.forward(q, B, u);
  const scale = new Float64Array(B);
  for (let i = 0; i < B; i++) {
    const zn = norm(u, i * d, d);
    scale[i] = zn === 0 ? 1 : norm(q, i * d, d) / zn;
    for (let r = 0; r < d; r++) u[i * d + r] *= scale[i];
  }
  const k = data.negativesPerPair;
  const candidates: number[] = [];
  const logits: number[] = [];
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
    for (let r = 0; r < d; r++) gz[uo + r] = scale[i] * (gu[r] - (u[uo + r] * dotUG) / (un * un || 1));
  }
  if (gz) model.backward(q, B, gz);
  return loss / B;
}

/*
 * The inner loops, unrolled by four. One function per pair of array types: V8 compiles a loop
 * over one typed-array kind much faster than one that sees both.
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
function axpy64(y: Float64Array, yo: number, g: number, v: Float64Array, vo: number, n: number): void {
  let x = 0;
  for (; x + 3 < n; x += 4) {
    y[yo + x] += g * v[vo + x];
    y[yo + x + 1] += g * v[vo + x + 1];
    y[yo + x + 2] += g * v[vo + x + 2];
    y[yo + x + 3] += g * v[vo + x + 3];
  }
  for (; x < n; x++) y[yo + x] += g * v[vo + x];
}

function evaluate(model: Parameters, data: TrainingData, pairs: Int32Array, temperature: number): HeldOutMetrics {
  const hits = { n: 0 };
  let loss = 0;
  for (let k = 0; k < pairs.length; k += EVAL_CHUNK) {
    const chunk = pairs.subarray(k, k + EVAL_CHUNK);
    loss += batchLoss(model, data, chunk, temperature, false, hits) * chunk.length;
  }
  return { loss: loss / pairs.length, accuracy: hits.n / pairs.length };
}

/** Adam (Kingma & Ba) over every parameter array, with L2 toward zero (the identity map) folded into the gradient. */
class Adam {
  private readonly m: Float64Array[];
  private readonly v: Float64Array[];
  private t = 0;

  constructor(
    private readonly model: Parameters,
    private readonly lr: number,
    private readonly l2: number,
    private readonly beta1 = 0.9,
    private readonly beta2 = 0.999,
    private readonly eps = 1e-8,
  ) {
    this.m = model.params.map((p) => new Float64Array(p.length));
    this.v = model.params.map((p) => new Float64Array(p.length));
  }

  zeroGrad(): void {
    for (const g of this.model.grads) g.fill(0);
  }

  step(): void {
    this.t++;
    const c1 = 1 - this.beta1 ** this.t;
    const c2 = 1 - this.beta2 ** this.t;
    this.model.params.forEach((param, k) => {
      const grad = this.model.grads[k];
      const m = this.m[k];
      const v = this.v[k];
      for (let i = 0; i < param.length; i++) {
        const g = grad[i] + 2 * this.l2 * param[i];
        m[i] = this.beta1 * m[i] + (1 - this.beta1) * g;
        v[i] = this.beta2 * v[i] + (1 - this.beta2) * g * g;
        param[i] -= (this.lr * (m[i] / c1)) / (Math.sqrt(v[i] / c2) + this.eps);
      }
    });
  }
}
