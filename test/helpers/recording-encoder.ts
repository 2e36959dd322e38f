import type { EncodeResult, Encoder, EncoderRole } from '../../src/encoders/types';

/**
 * A real encoder that records what it is asked to encode: each model call's texts (`calls`) and
 * all texts in order (`encoded`), to prove what is batched together or not encoded again. Name,
 * checksum and dimension can be overridden to register it as another model. close() leaves the
 * inner encoder open: the test that built it closes it.
 */
export class RecordingEncoder implements Encoder {
  readonly runtime = 'onnxruntime-node' as const;
  calls: string[][] = [];
  encoded: string[] = [];
  constructor(
    private readonly inner: Encoder,
    readonly name = inner.name,
    readonly checksum = inner.checksum,
    readonly dimension = inner.dimension,
  ) {}
  get normalized() {
    return this.inner.normalized;
  }
  maxTokens(role: EncoderRole) {
    return this.inner.maxTokens(role);
  }
  countTokens(text: string, role: EncoderRole) {
    return this.inner.countTokens(text, role);
  }
  encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult> {
    this.calls.push([...texts]);
    this.encoded.push(...texts);
    return this.inner.encode(texts, role, options);
  }
  async close() {}
}
