import type { EncoderRole } from './types';

export const DEFAULT_MODEL = 'use-lite';

/** Which model serves each DHR role: "use-lite" or the folder of a custom ONNX model. */
export type EncoderSpec = Record<EncoderRole, string>;

export const defaultEncoderSpec = (): EncoderSpec => ({
  questionDocument: DEFAULT_MODEL,
  document: DEFAULT_MODEL,
  questionPassage: DEFAULT_MODEL,
  passage: DEFAULT_MODEL,
});
