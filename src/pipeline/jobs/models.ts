import { ExternalEncoder, isExternal, MAX_DIMENSION } from '../../encoders/external';
import { loadEncoder, type EncoderSetOptions } from '../../encoders/set';
import { ENCODER_ROLES, EncoderError, type Encoder, type EncoderRole } from '../../encoders/types';
import { badUserInput, DomainError, ErrorCode, messageOf, notFound } from '../../errors';
import { activateModel, type ActiveAssignment } from '../../store/active';
import type { Database } from '../../store/db';
import { EmbeddingModelError, modelByName, registerModel, type EmbeddingModelRow } from '../../store/embeddings';
import type { ModelRegistry } from './registry';

/**
 * Registers a model folder (or 'use-lite') as an embedding model: it must load, and a probe
 * encoding must have the dimension it declares. Serving it is a separate step (activation).
 * A folder that does not load is MODEL_INVALID; a name already stored with other weights, CONFLICT.
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
  } catch (error) {
    if (error instanceof EncoderError) throw new DomainError(ErrorCode.MODEL_INVALID, error.message, { argument: 'path' });
    if (error instanceof EmbeddingModelError) throw new DomainError(ErrorCode.CONFLICT, error.message, { argument: 'path' });
    throw error;
  } finally {
    await encoder?.close();
  }
}

/** Longest model name: names appear in messages, logs and index names' neighbours; 200 is plenty. */
const MAX_NAME = 200;

/**
 * Registers an external model ("bring your own vectors"): a name and a dimension, no encoder files.
 * Its document and passage vectors come with ingestDocuments, its question vectors with retrieve;
 * it is activated for roles like any model (activation still needs every document and passage
 * covered). Registering it again with the same dimension is a no-op; another dimension, or the
 * name of a model with encoder files, is CONFLICT.
 */
export async function registerExternalModel(db: Database, name: string, dimension: number): Promise<EmbeddingModelRow> {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed !== name || name.length > MAX_NAME) {
    throw badUserInput(`name must be 1–${MAX_NAME} characters without surrounding spaces, got "${name.slice(0, MAX_NAME)}"`, 'name');
  }
  if (!Number.isInteger(dimension) || dimension < 1 || dimension > MAX_DIMENSION) {
    throw badUserInput(`dimension must be an integer from 1 to ${MAX_DIMENSION}, got ${dimension}`, 'dimension');
  }
  const existing = await modelByName(db, name);
  if (existing && !isExternal(existing)) {
    throw new DomainError(ErrorCode.CONFLICT, `a model named "${name}" is registered with encoder files (${existing.runtime}); choose another name`, {
      argument: 'name',
    });
  }
  try {
    return await registerModel(db, new ExternalEncoder(name, dimension));
  } catch (error) {
    if (error instanceof EmbeddingModelError) {
      throw new DomainError(
        ErrorCode.CONFLICT,
        `external model "${name}" is registered with dimension ${existing?.dimension}, not ${dimension}: its stored vectors cannot change dimension; drop it or choose another name`,
        {
          argument: 'dimension',
        },
      );
    }
    throw error;
  }
}

/**
 * Switches roles to a stored model. With a registry, the model is loaded first: one this process
 * cannot load must not become the one it serves (MODEL_UNAVAILABLE); the registry then forgets
 * its cached assignment.
 */
export async function activateStoredModel(
  db: Database,
  name: string,
  roles: readonly EncoderRole[] = ENCODER_ROLES,
  registry?: ModelRegistry,
): Promise<ActiveAssignment> {
  const row = await modelByName(db, name);
  if (!row) throw notFound(`no embedding model named "${name}" is registered`, 'model');
  if (registry) {
    try {
      await registry.encoderFor(row);
    } catch (error) {
      throw new DomainError(ErrorCode.MODEL_UNAVAILABLE, messageOf(error), { argument: 'model' });
    }
  }
  const assignment = await activateModel(db, name, roles);
  registry?.invalidate();
  return assignment;
}
