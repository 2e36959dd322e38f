/** Shared onnxruntime-node session creation for every encoder. */
import { existsSync } from 'node:fs';
import { InferenceSession } from 'onnxruntime-node';
import { DEFAULT_QUERY_THREADS, EncoderError, isQuestionRole, type EncoderRole, type OnnxSessionOptions } from './types';

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

export interface SessionOptions {
  /** onnxruntime intra-op threads; 0 = onnxruntime's default (all cores). */
  intraOpThreads?: number;
  /**
   * Whether idle pool threads busy-wait for the next op (onnxruntime's default). Off by default:
   * bench:encoder measured a whole core burnt between spaced questions with it on.
   */
  allowSpinning?: boolean;
  /** Defaults to 'all'; lower levels exist for benchmarks and debugging. */
  graphOptimizationLevel?: GraphOptimizationLevel;
}

/** Opens an ONNX model; a missing or unloadable file is an EncoderError naming it. */
export async function createOnnxSession(model: string, path: string, options: SessionOptions = {}): Promise<InferenceSession> {
  if (!existsSync(path)) throw new EncoderError(model, `ONNX file ${path} does not exist`);
  const spin = options.allowSpinning ? '1' : '0';
  try {
    return await InferenceSession.create(path, {
      intraOpNumThreads: options.intraOpThreads ?? 0,
      interOpNumThreads: 1, // one graph at a time; parallelism is inside the ops
      executionMode: 'sequential',
      graphOptimizationLevel: options.graphOptimizationLevel ?? 'all',
      logSeverityLevel: 3, // errors only: its warnings are about graph rewrites, not our inputs
      // session.intra_op.allow_spinning / session.inter_op.allow_spinning
      extra: { session: { intra_op: { allow_spinning: spin }, inter_op: { allow_spinning: spin } } },
    });
  } catch (e) {
    throw new EncoderError(model, `${path} could not be loaded by onnxruntime (corrupt or not an ONNX model?): ${(e as Error).message}`);
  }
}

/**
 * One model's sessions for its two workloads: questions (a few texts, latency; few threads) and
 * corpus embedding (large batches, throughput; all cores by default). The bulk session opens on
 * first use, so an API server that never embeds holds the weights once; with equal settings both
 * paths share one session.
 */
export class OnnxSessions {
  private bulkSession?: Promise<InferenceSession>;

  private constructor(
    private readonly model: string,
    private readonly path: string,
    readonly query: InferenceSession,
    private readonly bulkOptions: SessionOptions,
    private readonly shared: boolean,
  ) {}

  static async open(
    model: string,
    path: string,
    options: OnnxSessionOptions & { graphOptimizationLevel?: GraphOptimizationLevel } = {},
  ): Promise<OnnxSessions> {
    const common = { allowSpinning: options.allowSpinning ?? false, graphOptimizationLevel: options.graphOptimizationLevel };
    const queryThreads = options.queryThreads ?? DEFAULT_QUERY_THREADS;
    const bulkThreads = options.intraOpThreads ?? 0;
    const query = await createOnnxSession(model, path, { ...common, intraOpThreads: queryThreads });
    return new OnnxSessions(model, path, query, { ...common, intraOpThreads: bulkThreads }, queryThreads === bulkThreads);
  }

  /** The session for a role: question roles take the query session, documents and passages the bulk one. */
  async forRole(role: EncoderRole): Promise<InferenceSession> {
    if (this.shared || isQuestionRole(role)) return this.query;
    if (!this.bulkSession) {
      this.bulkSession = createOnnxSession(this.model, this.path, this.bulkOptions);
      this.bulkSession.catch(() => (this.bulkSession = undefined));
    }
    return this.bulkSession;
  }

  async release(): Promise<void> {
    const bulk = this.bulkSession;
    this.bulkSession = undefined;
    await Promise.all([
      this.query.release(),
      bulk?.then(
        (s) => s.release(),
        () => undefined,
      ),
    ]);
  }
}
