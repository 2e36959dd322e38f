import { loadEncoder, type EncoderSetOptions } from '../encoders/set';
import { EncoderError, type Encoder } from '../encoders/types';
import type { Database } from '../store/db';
import { registerModel, type EmbeddingModelRow } from '../store/embeddings';

/**
 * Registers a model folder (or 'use-lite') as an embedding model: it must load, and a probe
 * encoding must have the dimension it declares. Serving it is a separate step (activation).
 */
export async function registerModelFromPath(db: Database, path: string, options: EncoderSetOptions = {}): Promise<EmbeddingModelRow> {
  let encoder: Encoder | undefined;
  try {
    encoder = await loadEncoder(path, options);
    const probe = (await encoder.encode(['dimension probe'], 'passage')).vectors[0];
    if (probe.length !== encoder.dimension) {
      throw new EncoderError(encoder.name, `declares dimension ${encoder.dimension} but produced a ${probe.length}-d vector`);
    }
    return await registerModel(db, encoder, {
      maxTokens: { document: encoder.maxTokens('document'), passage: encoder.maxTokens('passage') },
    });
  } finally {
    await encoder?.close();
  }
}
