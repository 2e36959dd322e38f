import { DOCUMENT_ROW, fieldsOf, PASSAGE_ROW, qualified, type Columns } from '../../store/rows';

/**
 * The ranked rows' own columns, fetched by the search statement itself: the API asks for the
 * columns its GraphQL selection reads, and they come back in the same round trip, from the same
 * snapshot as the ranking (a concurrent delete cannot remove a ranked row between the two).
 */

/** Passage columns by the name the API reads them under (PassageRow). */
export const PASSAGE_FIELDS = qualified(PASSAGE_ROW, 'p');

/** Document columns by the name the API reads them under (DocumentRow). */
export const DOCUMENT_FIELDS = qualified(DOCUMENT_ROW, 'd');

export type PassageField = keyof typeof PASSAGE_FIELDS;
export type DocumentField = keyof typeof DOCUMENT_FIELDS;

/** A row as `passage_rows` and `document_rows` carry it: the fields asked for, timestamps as JSON's text. */
export type JsonRow<R> = { [F in keyof R]?: R[F] extends Date ? string : R[F] };

/** A JSON row as the API reads rows: timestamp columns as Dates, as Prisma gives them. */
export function fromJson<R>(map: Columns<R>, row: JsonRow<R>): Partial<R> {
  const out: Record<string, unknown> = { ...row };
  for (const f of fieldsOf(map)) if (map[f].type === 'timestamptz' && typeof out[f] === 'string') out[f] = new Date(out[f]);
  return out as Partial<R>;
}

/** What the caller reads of the ranked rows; absent parts are not fetched. */
export interface RowFetch {
  /** Columns of the ranked passages. */
  passages?: readonly PassageField[];
  /** Columns of the ranked documents (unless `ofDocuments` is false), and of the ranked passages' documents when `ofPassages`. */
  documents?: readonly DocumentField[];
  ofPassages?: boolean;
  /**
   * false: only the ranked passages' documents are read, not the k1 ranked documents (a selection
   * of passages and their document's title reads 20 rows, not 100: bench:hybrid, docs/benchmarks.md).
   */
  ofDocuments?: boolean;
}

const object = (fields: readonly string[], columns: Record<string, string>) =>
  `json_build_object(${[...new Set(['id', ...fields])].map((f) => `'${f}', ${columns[f]}`).join(', ')})`;

/**
 * The mode's statement (one row: passages, documents[, question_terms]) with the requested rows
 * added as JSON columns `passage_rows` and `document_rows`. The statement becomes a CTE read once
 * more per level; its plan is unchanged.
 */
export function withRows(sql: string, fetch: RowFetch | undefined): string {
  if (!fetch?.passages && !fetch?.documents) return sql;
  const ids = (column: string, key: string) => `SELECT (e->>'${key}')::int FROM ranked, json_array_elements(ranked.${column}) e`;
  const parts = ['ranked.*'];
  if (fetch.passages) {
    parts.push(`(SELECT coalesce(json_agg(${object(fetch.passages, PASSAGE_FIELDS)}), '[]'::json)
      FROM passages p WHERE p.id IN (${ids('passages', 'passageId')})) AS passage_rows`);
  }
  if (fetch.documents) {
    const wanted = [
      ...(fetch.ofDocuments === false ? [] : [ids('documents', 'documentId')]),
      ...(fetch.ofPassages ? [ids('passages', 'documentId')] : []),
    ].join(' UNION ');
    parts.push(`(SELECT coalesce(json_agg(${object(fetch.documents, DOCUMENT_FIELDS)}), '[]'::json)
      FROM documents d WHERE d.id IN (${wanted})) AS document_rows`);
  }
  return `WITH ranked AS (${sql})\nSELECT ${parts.join(', ')} FROM ranked`;
}
