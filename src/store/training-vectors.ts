import type { Queryable } from './db';

/** Ids per statement: bounds the rows (and the parameter) one read holds. */
export const VECTOR_READ_BATCH = 1000;

/**
 * Stored vectors of one model by id, read a bounded batch at a time and written straight into
 * `into` (row = the id's index in `ids`). Returns which ids had no vector (deleted since the
 * pairs were mined, or not embedded yet).
 */
export async function readStoredVectors(
  db: Queryable,
  level: 'document' | 'passage',
  modelId: number,
  ids: readonly number[],
  dim: number,
  into: Float32Array,
): Promise<Set<number>> {
  const [table, column] = level === 'document' ? ['document_embeddings', 'document_id'] : ['passage_embeddings', 'passage_id'];
  const row = new Map(ids.map((id, i) => [id, i]));
  const missing = new Set(ids);
  for (let k = 0; k < ids.length; k += VECTOR_READ_BATCH) {
    const batch = ids.slice(k, k + VECTOR_READ_BATCH);
    const rows = await db.query<{ id: number; v: string }>(
      `SELECT ${column} AS id, embedding::text AS v FROM ${table} WHERE model_id = $1 AND ${column} = ANY($2::int[])`,
      [modelId, batch],
    );
    for (const r of rows) {
      // pgvector's text form is a JSON array.
      const values = JSON.parse(r.v) as number[];
      if (values.length !== dim) continue;
      into.set(values, row.get(Number(r.id))! * dim);
      missing.delete(Number(r.id));
    }
  }
  return missing;
}
