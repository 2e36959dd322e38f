/** Public API of the encoders: the contract, USE-lite (the default model) and custom transformer models. */
export * from './types';
export { createOnnxSession, type GraphOptimizationLevel, type SessionOptions } from './onnx';
export { UseLiteEncoder, type UseLiteLoadOptions } from './use-lite/encoder';
export { defaultModelCacheDir, defaultUseLiteModelDir, ensureUseLiteOnnx, USE_LITE_CONVERTER_VERSION } from './use-lite/model';
export { UseLiteTokenizer } from './use-lite/tokenizer';
export * from './transformer';
export { EncoderSet, type EncoderSetOptions } from './set';
export { DEFAULT_MODEL, defaultEncoderSpec, type EncoderSpec } from './spec';
