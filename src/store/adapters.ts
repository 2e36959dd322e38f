import { ADAPTER_LEVELS, decodeWeights, encodeWeights, type AdapterLevel, type LinearMap, type QueryAdapter } from '../adapters/linear';
import { DomainError, ErrorCode, conflict, notFound } from '../errors';
import type { Database, Queryable } from './db';
import { activeAssignment, type ActiveAssignment } from './active';
import type { EmbeddingModelRow } from './embeddings';
import type { QueryAdapter as QueryAdapterModel } from '../generated/prisma/client';
import { columnsOf, selectList } from './rows';

/** The question role and the stored-vector role each adapter level sits between. */
export const LEVEL_ROLES = {
  document: { question: 'questionDocument', target: 'document' },
  passage: { question: 'questionPassage', target: 'passage' },
} as const;

export interface AdapterBase {
  question: EmbeddingModelRow;
  target: EmbeddingModelRow;
}

export interface AdapterRow {
  id: number;
  name: string;
  dimension: number;
  levels: AdapterLevel[];
  /** Base model ids and names per level. */
  models: Partial<Record<AdapterLevel, { questionId: number; question: string; targetId: number; target: string }>>;
  training: Record<string, unknown>;
  createdAt: Date;
  active: boolean;
}

export interface NewAdapter {
  name: string;
  dimension: number;
  maps: Partial<Record<AdapterLevel, LinearMap>>;
  models: Partial<Record<AdapterLevel, AdapterBase>>;
  training: Record<string, unknown>;
}

/**
 * The stored record as Prisma's model has it, its training notes a JSON object; the weights are
 * left out (only loadAdapter reads them, as bytes).
 */
export type StoredAdapter = Omit<QueryAdapterModel, 'documentWeights' | 'passageWeights' | 'training'> & { training: Record<string, unknown> };

export const ADAPTER_ROW = columnsOf<StoredAdapter>()({
  id: 'int',
  name: 'text',
  dimension: 'int',
  questionDocumentModelId: 'int',
  documentModelId: 'int',
  questionPassageModelId: 'int',
  passageModelId: 'int',
  training: 'jsonb',
  createdAt: 'timestamptz',
});

/** The record, its base models' names and whether it is the active one. */
const ROW_SQL = `SELECT ${selectList(ADAPTER_ROW, 'a')},
    qd.name AS "questionDocumentModel", d.name AS "documentModel", qp.name AS "questionPassageModel", p.name AS "passageModel",
    (s.adapter_id IS NOT NULL) AS active
  FROM query_adapters a
  LEFT JOIN embedding_models qd ON qd.id = a.question_document_model_id
  LEFT JOIN embedding_models d ON d.id = a.document_model_id
  LEFT JOIN embedding_models qp ON qp.id = a.question_passage_model_id
  LEFT JOIN embedding_models p ON p.id = a.passage_model_id
  LEFT JOIN active_adapter s ON s.adapter_id = a.id`;

interface RawRow extends StoredAdapter {
  questionDocumentModel: string | null;
  documentModel: string | null;
  questionPassageModel: string | null;
  passageModel: string | null;
  active: boolean;
}

function toRow(r: RawRow): AdapterRow {
  const models: AdapterRow['models'] = {};
  if (r.documentModelId !== null) {
    models.document = { questionId: r.questionDocumentModelId!, question: r.questionDocumentModel!, targetId: r.documentModelId, target: r.documentModel! };
  }
  if (r.passageModelId !== null) {
    models.passage = { questionId: r.questionPassageModelId!, question: r.questionPassageModel!, targetId: r.passageModelId, target: r.passageModel! };
  }
  return {
    id: Number(r.id),
    name: r.name,
    dimension: Number(r.dimension),
    levels: ADAPTER_LEVELS.filter((l) => models[l]),
    models,
    training: r.training,
    createdAt: new Date(r.createdAt),
    active: r.active,
  };
}

export async function listAdapters(db: Queryable): Promise<AdapterRow[]> {
  return (await db.query<RawRow>(`${ROW_SQL} ORDER BY a.id`)).map(toRow);
}

export async function adapterByName(db: Queryable, name: string): Promise<AdapterRow | undefined> {
  const [row] = await db.query<RawRow>(`${ROW_SQL} WHERE a.name = $1`, [name]);
  return row ? toRow(row) : undefined;
}

function mismatch(message: string): DomainError {
  return new DomainError(ErrorCode.DIMENSION_MISMATCH, message, { argument: 'adapter' });
}

/**
 * Stores a trained adapter in one statement (all of it or nothing). A name already taken is
 * CONFLICT; a map or base model of another dimension, DIMENSION_MISMATCH.
 */
export async function registerAdapter(db: Queryable, input: NewAdapter): Promise<AdapterRow> {
  const levels = ADAPTER_LEVELS.filter((l) => input.maps[l]);
  if (levels.length === 0) throw new DomainError(ErrorCode.BAD_USER_INPUT, 'an adapter needs a map for at least one level', { argument: 'levels' });
  for (const level of levels) {
    const map = input.maps[level]!;
    const base = input.models[level];
    if (!base) throw new DomainError(ErrorCode.BAD_USER_INPUT, `the ${level} map has no base models`, { argument: 'levels' });
    if (map.dim !== input.dimension) throw mismatch(`the ${level} map is ${map.dim}-d, but the adapter is ${input.dimension}-d`);
    for (const model of [base.question, base.target]) {
      if (model.dimension !== input.dimension) {
        throw mismatch(`the ${level} level's base model "${model.name}" is ${model.dimension}-d, but the adapter is ${input.dimension}-d`);
      }
    }
  }
  const weights = (l: AdapterLevel) => (input.maps[l] ? Buffer.from(encodeWeights(input.maps[l]!)) : null);
  const rows = await db.query<{ id: number }>(
    `INSERT INTO query_adapters (name, dimension, question_document_model_id, document_model_id,
       question_passage_model_id, passage_model_id, document_weights, passage_weights, training)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb) ON CONFLICT (name) DO NOTHING RETURNING id`,
    [
      input.name,
      input.dimension,
      input.maps.document ? input.models.document!.question.id : null,
      input.maps.document ? input.models.document!.target.id : null,
      input.maps.passage ? input.models.passage!.question.id : null,
      input.maps.passage ? input.models.passage!.target.id : null,
      weights('document'),
      weights('passage'),
      JSON.stringify(input.training),
    ],
  );
  if (rows.length === 0) throw conflict(`an adapter named "${input.name}" already exists; choose another name`, 'name');
  return (await adapterByName(db, input.name))!;
}

/**
 * Why an adapter cannot serve under these active models, or undefined if it can: each of its
 * levels must sit between the very models it was trained over (same dimension is not enough:
 * another model's space is another space).
 */
export function adapterProblem(
  adapter: Pick<AdapterRow, 'name' | 'dimension' | 'models'>,
  assignment: ActiveAssignment,
): { code: ErrorCode; message: string } | undefined {
  for (const level of ADAPTER_LEVELS) {
    const base = adapter.models[level];
    if (!base) continue;
    const roles = LEVEL_ROLES[level];
    for (const [role, id, name] of [
      [roles.question, base.questionId, base.question],
      [roles.target, base.targetId, base.target],
    ] as const) {
      const active = assignment[role];
      if (!active) return { code: ErrorCode.MODEL_UNAVAILABLE, message: `adapter "${adapter.name}" needs a ${role} model, and none is active` };
      if (Number(active.dimension) !== adapter.dimension) {
        return {
          code: ErrorCode.DIMENSION_MISMATCH,
          message: `adapter "${adapter.name}" maps ${adapter.dimension}-d vectors, but the active ${role} model "${active.name}" is ${active.dimension}-d`,
        };
      }
      if (Number(active.id) !== Number(id)) {
        return {
          code: ErrorCode.CONFLICT,
          message: `adapter "${adapter.name}" was trained for ${role} model "${name}", but "${active.name}" serves it now`,
        };
      }
    }
  }
  return undefined;
}

/**
 * Makes an adapter the one retrieval applies (null: none), in one transaction. Refused, with
 * nothing changed, unless it fits the active models (adapterProblem).
 */
export function activateAdapter(db: Database, name: string | null): Promise<AdapterRow | undefined> {
  return db.transaction((tx) => activateAdapterIn(tx, name));
}

/**
 * activateAdapter inside the caller's transaction (dhr adapt --activate registers and activates
 * in one). Locks active_encoders in SHARE mode, so a model activation cannot land between the
 * check and the write.
 */
export async function activateAdapterIn(tx: Queryable, name: string | null): Promise<AdapterRow | undefined> {
  await tx.query('LOCK TABLE active_encoders IN SHARE MODE');
  await tx.query('LOCK TABLE active_adapter IN EXCLUSIVE MODE');
  if (name === null) {
    await tx.query('DELETE FROM active_adapter');
    return undefined;
  }
  const adapter = await adapterByName(tx, name);
  if (!adapter) throw notFound(`no adapter named "${name}" is registered`, 'adapter');
  const problem = adapterProblem(adapter, await activeAssignment(tx));
  if (problem) throw new DomainError(problem.code, problem.message, { argument: 'adapter' });
  await tx.query(
    `INSERT INTO active_adapter (slot, adapter_id) VALUES (true, $1)
     ON CONFLICT (slot) DO UPDATE SET adapter_id = EXCLUDED.adapter_id, activated_at = EXCLUDED.activated_at`,
    [adapter.id],
  );
  return { ...adapter, active: true };
}

/**
 * Deletes a registered adapter (its weights and training record), in one transaction. The active
 * one is refused with CONFLICT (activate another, or none, first): dropping it would change
 * retrieval's scores as a side effect; an unknown name is NOT_FOUND. Nothing else refers to it.
 */
export function dropAdapter(db: Database, name: string): Promise<void> {
  return db.transaction(async (tx) => {
    // The lock activation takes: no activation of this adapter can land between check and delete.
    await tx.query('LOCK TABLE active_adapter IN EXCLUSIVE MODE');
    const adapter = await adapterByName(tx, name);
    if (!adapter) throw notFound(`no adapter named "${name}" is registered`, 'name');
    if (adapter.active) throw conflict(`adapter "${name}" is active; activate another adapter, or none, before dropping it`, 'name');
    await tx.query('DELETE FROM query_adapters WHERE id = $1', [adapter.id]);
  });
}

export async function activeAdapterId(db: Queryable): Promise<number | undefined> {
  const [row] = await db.query<{ id: number }>('SELECT adapter_id AS id FROM active_adapter');
  return row ? Number(row.id) : undefined;
}

/** An adapter with its maps, ready to apply. */
export interface LoadedAdapter {
  row: AdapterRow;
  adapter: QueryAdapter;
}

export async function loadAdapter(db: Queryable, id: number): Promise<LoadedAdapter | undefined> {
  const [raw] = await db.query<RawRow & { document_weights: Uint8Array | null; passage_weights: Uint8Array | null }>(
    `${ROW_SQL.replace('SELECT ', 'SELECT a.document_weights, a.passage_weights, ')} WHERE a.id = $1`,
    [id],
  );
  if (!raw) return undefined;
  const row = toRow(raw);
  const maps: QueryAdapter['maps'] = {};
  if (raw.document_weights) maps.document = decodeWeights(raw.document_weights, row.dimension);
  if (raw.passage_weights) maps.passage = decodeWeights(raw.passage_weights, row.dimension);
  return { row, adapter: { name: row.name, dim: row.dimension, maps } };
}
