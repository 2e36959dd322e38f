import { isExternal } from '../encoders/external';
import { badUserInput, notFound } from '../errors';
import type { Queryable } from '../store/db';
import { modelByName, type EmbeddingTargets, type SuppliedVectorModels } from '../store/embeddings';

/** The active document and passage models that are external: the levels whose vectors ingest takes from the caller. */
export function externalLevels(targets: EmbeddingTargets | undefined): SuppliedVectorModels {
  return {
    document: targets && isExternal(targets.document) ? targets.document : undefined,
    passage: targets && isExternal(targets.passage) ? targets.passage : undefined,
  };
}

/**
 * Where an ingest's own vectors go: the named external model for both levels (to fill a model
 * before it is activated: activation needs every document and passage covered), else the active
 * models that are external. A named model that is unknown is NOT_FOUND; one with encoder files,
 * BAD_USER_INPUT (the server computes its vectors).
 */
export async function suppliedVectorModels(db: Queryable, active: EmbeddingTargets | undefined, model?: string): Promise<SuppliedVectorModels> {
  if (model === undefined) return externalLevels(active);
  const row = await modelByName(db, model);
  if (!row) throw notFound(`no embedding model named "${model}" is registered`, 'model');
  if (!isExternal(row)) {
    throw badUserInput(`model "${model}" computes its own vectors (${row.runtime}); model names the external model the documents' vectors are for`, 'model');
  }
  return { document: row, passage: row };
}
