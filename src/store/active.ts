import { ENCODER_ROLES, type EncoderRole } from '../encoders/types';
import { DomainError, ErrorCode, notFound } from '../errors';
import type { Database, Queryable } from './db';
import { MODEL_COLUMNS, pendingCounts, type EmbeddingModelRow } from './embeddings';

/** Which stored model serves each DHR role; empty until the first activation. */
export type ActiveAssignment = Partial<Record<EncoderRole, EmbeddingModelRow>>;

export async function activeAssignment(db: Queryable): Promise<ActiveAssignment> {
  const rows = await db.query<EmbeddingModelRow & { role: EncoderRole }>(
    `SELECT a.role, ${MODEL_COLUMNS.split(', ')
      .map((c) => `m.${c}`)
      .join(', ')}
     FROM active_encoders a JOIN embedding_models m ON m.id = a.model_id`,
  );
  const assignment: ActiveAssignment = {};
  for (const { role, ...model } of rows) assignment[role] = model;
  return assignment;
}

/** The roles whose stored vectors a model must cover before it may serve them. */
const TARGET_ROLES: readonly EncoderRole[] = ['document', 'passage'];
const PAIRS = [
  ['questionDocument', 'document'],
  ['questionPassage', 'passage'],
] as const;

export interface ActivateOptions {
  /** Skip the coverage check: only for the first assignment of an empty store, whose corpus is embedded after. */
  bootstrap?: boolean;
}

/**
 * Switches the given roles to a model in one transaction. Refused unless the model has a current
 * vector for every document (document role) and every passage (passage role), and unless each
 * question encoder keeps the dimension of the encoder it is paired with.
 */
export async function activateModel(
  db: Database,
  name: string,
  roles: readonly EncoderRole[] = ENCODER_ROLES,
  options: ActivateOptions = {},
): Promise<ActiveAssignment> {
  return db.transaction(async (tx) => {
    // Serializes activations: two concurrent switches cannot interleave their checks and writes.
    await tx.query('LOCK TABLE active_encoders IN EXCLUSIVE MODE');
    const [model] = await tx.query<EmbeddingModelRow>(`SELECT ${MODEL_COLUMNS} FROM embedding_models WHERE name = $1`, [name]);
    if (!model) throw notFound(`no embedding model named "${name}" is registered`, 'model');
    const current = await activeAssignment(tx);
    const next: ActiveAssignment = { ...current };
    for (const role of roles) next[role] = model;

    for (const [question, target] of PAIRS) {
      const q = next[question];
      const t = next[target];
      if (q && t && q.dimension !== t.dimension) {
        throw new DomainError(
          ErrorCode.DIMENSION_MISMATCH,
          `${question} would be "${q.name}" (${q.dimension}-d) but ${target} "${t.name}" (${t.dimension}-d): ` +
            'a question encoder must share its target encoder’s dimension; activate both roles together',
          { argument: 'model' },
        );
      }
    }
    if (!options.bootstrap) {
      const needs = TARGET_ROLES.filter((r) => roles.includes(r));
      if (needs.length > 0) {
        const pending = await pendingCounts(tx, model.id, model.id);
        const missing = {
          documents: needs.includes('document') ? pending.documents : 0,
          passages: needs.includes('passage') ? pending.passages : 0,
        };
        if (missing.documents + missing.passages > 0) {
          throw new DomainError(
            ErrorCode.MODEL_INCOMPLETE,
            `model "${name}" lacks current embeddings for ${missing.documents} documents and ${missing.passages} passages; ` +
              `run reembed(model: "${name}", scope: STALE) and activate it when the job has succeeded`,
            { argument: 'model', details: { missing } },
          );
        }
      }
    }
    for (const role of roles) {
      await tx.query(
        `INSERT INTO active_encoders (role, model_id) VALUES ($1, $2)
         ON CONFLICT (role) DO UPDATE SET model_id = EXCLUDED.model_id, activated_at = EXCLUDED.activated_at`,
        [role, model.id],
      );
    }
    return next;
  });
}

/**
 * Removes a model that serves no role: its vectors, its jobs and its HNSW indexes.
 */
export async function dropModel(db: Database, name: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('LOCK TABLE active_encoders IN EXCLUSIVE MODE');
    const [model] = await tx.query<{ id: number }>('SELECT id FROM embedding_models WHERE name = $1', [name]);
    if (!model) throw notFound(`no embedding model named "${name}" is registered`, 'model');
    const roles = await tx.query<{ role: string }>('SELECT role FROM active_encoders WHERE model_id = $1 ORDER BY role', [model.id]);
    if (roles.length > 0) {
      throw new DomainError(
        ErrorCode.MODEL_ACTIVE,
        `model "${name}" serves ${roles.map((r) => r.role).join(', ')}; activate another model for those roles first`,
        { argument: 'model' },
      );
    }
    const id = Number(model.id);
    await tx.query(`DROP INDEX IF EXISTS document_embeddings_hnsw_m${id}`);
    await tx.query(`DROP INDEX IF EXISTS passage_embeddings_hnsw_m${id}`);
    // Cascades to its vectors, jobs and batches.
    await tx.query('DELETE FROM embedding_models WHERE id = $1', [id]);
  });
}
