import { DEFAULT_MODEL } from '../encoders/spec';
import { TransformerEncoder } from '../encoders/transformer/encoder';
import { EncoderError, type Encoder } from '../encoders/types';
import { UseLiteEncoder } from '../encoders/use-lite/encoder';
import type { Database } from '../store/db';
import { registerModel, type EmbeddingModelRow } from '../store/embeddings';

export interface LoadOptions {
  cacheDir?: string;
  threads?: number;
}

/**
 * Registers a model folder (or 'use-lite') as an embedding model: it must load, and a probe
 * encoding must have the dimension it declares. Serving it is a separate step (activation).
 */
export async function registerModelFromPath(db: Database, path: string, options: LoadOptions = {}): Promise<EmbeddingModelRow> {
  let encoder: Encoder | undefined;
  try {
    encoder =
      path === DEFAULT_MODEL
        ? await UseLiteEncoder.load({ cacheDir: options.cacheDir, threads: options.threads })
        : await TransformerEncoder.load(path, { threads: options.threads });
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
