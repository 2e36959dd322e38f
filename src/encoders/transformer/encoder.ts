/**
 * A custom sentence-transformers style model (BERT, MiniLM, bge, e5, DPR, …) from a folder holding
 * model.onnx, tokenizer.json and dhr-model.json, run on onnxruntime-node.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type * as ort from 'onnxruntime-node';
import { EncoderError, isQuestionRole, maxTokensFor, type EncodeResult, type Encoder, type EncoderRole, type MaxTokens } from '../types';
import { parseModelConfig, type TransformerModelConfig } from './config';
import { checkFilesExist, folderName, modelFiles, sha256, type ModelFiles } from './files';
import { embeddingRows } from './graph';
import { l2Normalize, sentenceVectors } from './pooling';
import { OnnxSessions } from '../onnx';
import { planRuns } from '../batches';
import { buildFeeds, describeIO, type ModelIO } from './session';
import { TextTokenizer } from './tokenizer';

export interface TransformerLoadOptions {
  /** onnxruntime intra-op threads for corpus embedding; unset or 0 = onnxruntime's default. */
  threads?: number;
  /** Intra-op threads for questions (default DEFAULT_QUERY_THREADS). */
  queryThreads?: number;
  /** Let idle onnxruntime threads spin (default false). */
  allowSpinning?: boolean;
  /** Token budget per kind of text; replaces dhr-model.json's maxTokens (still capped by the model). */
  maxTokens?: MaxTokens;
  /** Fail to load unless the model's embedding size is this (e.g. the dimension an index was built with). */
  expectDimension?: number;
}

const DEFAULT_BATCH_SIZE = 32;

export class TransformerEncoder implements Encoder {
  readonly runtime = 'onnxruntime-node' as const;
  readonly name: string;
  readonly normalized: boolean;
  /** The model folder, absolute. */
  source = '';
  private closed = false;

  private constructor(
    private readonly config: TransformerModelConfig,
    private readonly modelFile: string,
    private readonly sessions: OnnxSessions,
    private readonly io: ModelIO,
    private readonly tokenizer: TextTokenizer,
    private readonly limits: MaxTokens,
    readonly checksum: string,
    readonly dimension: number,
  ) {
    this.name = config.name;
    this.normalized = config.normalize;
  }

  static async load(dir: string, options: TransformerLoadOptions = {}): Promise<TransformerEncoder> {
    const files = modelFiles(dir);
    await checkFilesExist(files);
    const [modelBytes, tokenizerBytes, configBytes] = await Promise.all([readFile(files.model), readFile(files.tokenizer), readFile(files.config)]);
    const config = parseModelConfig(configBytes.toString('utf8'), files.config, folderName(files));
    const tokenizer = TextTokenizer.parse(tokenizerBytes.toString('utf8'), files.tokenizer, config.name);
    const sessions = await OnnxSessions.open(config.name, files.model, {
      intraOpThreads: options.threads,
      queryThreads: options.queryThreads,
      allowSpinning: options.allowSpinning,
    });
    const session = sessions.query;
    try {
      const io = describeIO(session, files.model, config.name);
      // The model's own input limit caps the configured budget: longer inputs would fail or be silently wrong.
      const cap = Math.min(tokenizer.maxLength ?? Infinity, io.fixedSeq ?? Infinity);
      const budget = options.maxTokens ?? config.maxTokens;
      for (const [kind, n] of Object.entries(budget)) {
        if (!Number.isInteger(n) || n < 1) throw new RangeError(`maxTokens.${kind} must be a positive integer, got ${n}`);
      }
      const limits: MaxTokens = {
        question: Math.min(budget.question, cap),
        document: Math.min(budget.document, cap),
        passage: Math.min(budget.passage, cap),
      };
      const run = (batch: number[][]) => runBatch(session, io, batch, tokenizer.padId, config, files.model);
      await checkVocabulary(tokenizer, modelBytes, io, run, config.name, files);
      const dimension =
        io.outputDim ??
        (
          await run([tokenizer.encode('probe', limits.question).ids]).catch((e: unknown) => {
            if (e instanceof EncoderError) throw e;
            throw new EncoderError(config.name, `${files.model}: probe run to find the embedding dimension failed: ${(e as Error).message}`);
          })
        )[0]!.length;
      if (options.expectDimension !== undefined && dimension !== options.expectDimension) {
        throw new EncoderError(config.name, `${files.model}: embedding dimension is ${dimension}, expected ${options.expectDimension}`);
      }
      const checksum = sha256([modelBytes, tokenizerBytes, configBytes]);
      const encoder = new TransformerEncoder(config, files.model, sessions, io, tokenizer, limits, checksum, dimension);
      encoder.source = resolve(dir);
      return encoder;
    } catch (e) {
      await sessions.release().catch(() => undefined);
      throw e;
    }
  }

  maxTokens(role: EncoderRole): number {
    return maxTokensFor(this.limits, role);
  }

  countTokens(text: string, role: EncoderRole): number {
    return this.tokenizer.encode(this.prefixFor(role) + text, Number.MAX_SAFE_INTEGER).ids.length;
  }

  async encode(texts: readonly string[], role: EncoderRole, options: { batchSize?: number } = {}): Promise<EncodeResult> {
    if (this.closed) throw new EncoderError(this.name, `${this.modelFile}: encoder is closed`);
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
    const prefix = this.prefixFor(role);
    const limit = this.maxTokens(role);
    const tokenized = texts.map((t) => this.tokenizer.encode(prefix + t, limit));

    // Batch texts of similar length together, cut where padding would cost more than another run
    // (batches.ts), so little compute goes to padding; results go back in input order.
    const order = tokenized.map((_, i) => i).sort((a, b) => tokenized[a]!.ids.length - tokenized[b]!.ids.length);
    const session = await this.sessions.forRole(role);
    const vectors = new Array<Float32Array>(texts.length);
    let start = 0;
    for (const size of planRuns(
      order.map((i) => tokenized[i]!.ids.length),
      batchSize,
    )) {
      const chunk = order.slice(start, (start += size));
      const out = await runBatch(
        session,
        this.io,
        chunk.map((i) => tokenized[i]!.ids),
        this.tokenizer.padId,
        this.config,
        this.modelFile,
      ).catch((e: unknown) => {
        throw e instanceof EncoderError ? e : new EncoderError(this.name, `${this.modelFile}: inference failed: ${(e as Error).message}`);
      });
      chunk.forEach((i, k) => (vectors[i] = out[k]!));
    }
    return {
      vectors,
      stats: {
        texts: texts.length,
        tokens: tokenized.reduce((n, t) => n + t.ids.length, 0),
        truncated: tokenized.filter((t) => t.truncated).length,
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.sessions.release();
  }

  private prefixFor(role: EncoderRole): string {
    const p = this.config.prefixes;
    if (isQuestionRole(role)) return p.question;
    return role === 'document' ? p.document : p.passage;
  }
}

/**
 * Every id the tokenizer can emit must be a row of the model's word embeddings, else the tokenizer
 * belongs to another model. Rows come from the graph; where it hides them, a probe run with the
 * largest id lets onnxruntime's Gather bounds check answer.
 */
async function checkVocabulary(
  tokenizer: TextTokenizer,
  modelBytes: Uint8Array,
  io: ModelIO,
  run: (batch: number[][]) => Promise<unknown>,
  model: string,
  files: ModelFiles,
): Promise<void> {
  const largest = `token id ${tokenizer.maxId} (${JSON.stringify(tokenizer.maxIdToken)})`;
  const rows = embeddingRows(modelBytes, io.inputs.find((i) => i.role === 'ids')!.name);
  if (rows !== undefined && tokenizer.maxId >= rows) {
    throw new EncoderError(model, `${files.tokenizer} does not match the model: it has ${largest} but ${files.model} embeds only ${rows} tokens`);
  }
  if (rows === undefined) {
    await run([[tokenizer.maxId]]).catch((e: unknown) => {
      throw new EncoderError(
        model,
        `${files.tokenizer} does not match the model: a probe run of ${files.model} with its largest ${largest} failed: ${(e as Error).message}`,
      );
    });
  }
}

/** One forward pass: ids → sentence vectors (pooled, normalized if configured). onnxruntime errors pass through. */
async function runBatch(
  session: ort.InferenceSession,
  io: ModelIO,
  batch: number[][],
  padId: number,
  config: TransformerModelConfig,
  file: string,
): Promise<Float32Array[]> {
  const feeds = buildFeeds(io, batch, padId);
  const output = (await session.run(feeds, [io.output]))[io.output];
  if (!output || output.type !== 'float32' || (output.dims.length !== 2 && output.dims.length !== 3)) {
    throw new EncoderError(
      config.name,
      `${file}: output "${io.output}" is ${output?.type} [${output?.dims.join(', ')}]; expected float32 [batch, hidden] or [batch, seq, hidden]`,
    );
  }
  const vectors = sentenceVectors(
    output.data as Float32Array,
    output.dims,
    batch.map((ids) => ids.length),
    config.pooling,
  );
  return config.normalize ? vectors.map(l2Normalize) : vectors;
}
