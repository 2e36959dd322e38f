/** Shared onnxruntime-node session creation for every encoder. */
import { existsSync } from 'node:fs';
import { InferenceSession } from 'onnxruntime-node';
import { EncoderError, type OnnxSessionOptions } from './types';

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all';

export interface SessionOptions extends OnnxSessionOptions {
  /** Defaults to 'all'; lower levels exist for benchmarks and debugging. */
  graphOptimizationLevel?: GraphOptimizationLevel;
}

/** Opens an ONNX model; a missing or unloadable file is an EncoderError naming it. */
export async function createOnnxSession(model: string, path: string, options: SessionOptions = {}): Promise<InferenceSession> {
  if (!existsSync(path)) throw new EncoderError(model, `ONNX file ${path} does not exist`);
  try {
    return await InferenceSession.create(path, {
      intraOpNumThreads: options.intraOpThreads ?? 0,
      interOpNumThreads: 1, // one graph at a time; parallelism is inside the ops
      executionMode: 'sequential',
      graphOptimizationLevel: options.graphOptimizationLevel ?? 'all',
      logSeverityLevel: 3, // errors only: its warnings are about graph rewrites, not our inputs
    });
  } catch (e) {
    throw new EncoderError(model, `${path} could not be loaded by onnxruntime (corrupt or not an ONNX model?): ${(e as Error).message}`);
  }
}
