import { EncoderError, type EncodeResult, type Encoder } from './types';

/** `embedding_models.runtime` of a model whose vectors come from the client (no encoder files). */
export const EXTERNAL_RUNTIME = 'external';

/** What an external model stores as its checksum: there are no weights to hash. */
export const EXTERNAL_CHECKSUM = 'external';

/** The largest dimension a model may have (embedding_models' CHECK; pgvector's HNSW indexes 2,000). */
export const MAX_DIMENSION = 2000;

export const isExternal = (encoder: Pick<Encoder, 'runtime'> | { runtime: string }): boolean => encoder.runtime === EXTERNAL_RUNTIME;

/**
 * An external model ("bring your own vectors"): registered by name and dimension only. It stands in
 * the encoder set like any model, so it can serve any role, but it encodes nothing: document and
 * passage vectors come with ingest, question vectors with retrieve. Embedding skips it; a call that
 * still reaches encode is a bug upstream and fails naming the model.
 */
export class ExternalEncoder implements Encoder {
  readonly runtime = EXTERNAL_RUNTIME;
  readonly checksum = EXTERNAL_CHECKSUM;
  readonly source = undefined;
  /** Unknown: the client's model decides; DHR's scores are inner products either way. */
  readonly normalized = false;

  constructor(
    readonly name: string,
    readonly dimension: number,
  ) {}

  /** No tokenizer: ingest splits by words only, and a client's own passages are kept as given. */
  maxTokens(): number {
    return Number.POSITIVE_INFINITY;
  }

  countTokens(text: string): number {
    return text.split(/\s+/).filter(Boolean).length;
  }

  async encode(): Promise<EncodeResult> {
    throw new EncoderError(
      this.name,
      'is an external model: its vectors come from the client (ingestDocuments with vectors, retrieve with questionVector); the server cannot encode text with it',
    );
  }

  async close(): Promise<void> {}
}
