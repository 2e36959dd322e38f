/**
 * The row shapes the API reads and ingest writes: their TypeScript types, and one column map per
 * shape from which the raw SQL's column lists are made (SELECT lists here and in
 * retrieval/statements/rows.ts, ingest's INSERT lists in write.ts, bulk-write.ts and bulk-links.ts).
 */
import type { Document, Link, Passage, Section } from '../generated/prisma/client';

/**
 * The rows' TypeScript shapes are Prisma's generated models (prisma/schema.prisma, kept in step
 * with migrations/ by test/prisma-schema.test.ts): a column added there reaches every reader.
 */
export type PassageRow = Passage;
export type SectionRow = Section;
export type LinkRow = Link;
/** metadata is always a JSON object (ingest checks it; the API serves it as one); Prisma types Json as any JSON value. */
export type DocumentRow = Omit<Document, 'metadata'> & { metadata: Record<string, unknown> };

/** A column of a row shape: its SQL name and type. */
export interface Column {
  readonly column: string;
  readonly type: 'int' | 'int[]' | 'bigint' | 'bool' | 'text' | 'text[]' | 'jsonb' | 'timestamptz';
  /** Read cast to this type (a bigint count the API serves as a JavaScript number). */
  readonly readAs?: 'float8';
  /**
   * Ingest writes it from the prepared document's field of the same name (ingest/types.ts); the
   * other columns are ids the writer draws or links, or have their default.
   */
  readonly ingested?: true;
}

/** One entry per field of the row type, no more: a column Prisma's model gains fails to compile until it is here. */
export type Columns<R> = { readonly [F in keyof R]-?: Column };

/** A column's type, or its type and how it is read, for columnsOf. */
export type ColumnSpec = Column['type'] | { readonly type: Column['type']; readonly readAs?: 'float8' };

/**
 * A row shape's column map from its fields' types, each column named as the migrations name it:
 * the field in snake_case (`pointsDone` → `points_done`). One entry per field of R, no more (the
 * object literal is checked against R), in the SELECT lists' order.
 */
export const columnsOf =
  <R>() =>
  (spec: { readonly [F in keyof R]-?: ColumnSpec }): Columns<R> =>
    Object.fromEntries(
      Object.entries(spec as Record<string, ColumnSpec>).map(([field, c]) => [
        field,
        { column: field.replace(/[A-Z]/g, (l) => `_${l.toLowerCase()}`), ...(typeof c === 'string' ? { type: c } : c) },
      ]),
    ) as Columns<R>;

/** Order is the SELECT lists' and INSERT lists' order. */
export const PASSAGE_ROW = {
  id: { column: 'id', type: 'int' },
  documentId: { column: 'document_id', type: 'int' },
  sectionId: { column: 'section_id', type: 'int' },
  ordinal: { column: 'ordinal', type: 'int', ingested: true },
  text: { column: 'text', type: 'text', ingested: true },
  titlePath: { column: 'title_path', type: 'text[]', ingested: true },
  wordCount: { column: 'word_count', type: 'int', ingested: true },
} as const satisfies Columns<PassageRow>;

export const SECTION_ROW = {
  id: { column: 'id', type: 'int' },
  documentId: { column: 'document_id', type: 'int' },
  parentId: { column: 'parent_id', type: 'int' },
  title: { column: 'title', type: 'text', ingested: true },
  depth: { column: 'depth', type: 'int', ingested: true },
  ordinal: { column: 'ordinal', type: 'int', ingested: true },
  position: { column: 'position', type: 'int', ingested: true },
  titlePath: { column: 'title_path', type: 'text[]', ingested: true },
} as const satisfies Columns<SectionRow>;

export const DOCUMENT_ROW = {
  id: { column: 'id', type: 'int' },
  key: { column: 'key', type: 'text', ingested: true },
  title: { column: 'title', type: 'text', ingested: true },
  abstract: { column: 'abstract', type: 'text', ingested: true },
  summary: { column: 'summary', type: 'text', ingested: true },
  source: { column: 'source', type: 'text', ingested: true },
  metadata: { column: 'metadata', type: 'jsonb', ingested: true },
  contentHash: { column: 'content_hash', type: 'text', ingested: true },
  createdAt: { column: 'created_at', type: 'timestamptz' },
  updatedAt: { column: 'updated_at', type: 'timestamptz' },
} as const satisfies Columns<DocumentRow>;

/** Links are read through Prisma; the map gives their INSERT lists (write.ts, bulk-links.ts). */
export const LINK_ROW = {
  id: { column: 'id', type: 'int' },
  passageId: { column: 'passage_id', type: 'int' },
  documentId: { column: 'document_id', type: 'int' },
  target: { column: 'target', type: 'text', ingested: true },
  // Resolved by the writer from the target (a key or a title), so not ingested.
  targetDocumentId: { column: 'target_document_id', type: 'int' },
  anchorText: { column: 'anchor_text', type: 'text', ingested: true },
} as const satisfies Columns<LinkRow>;

type ColumnMap = Record<string, Column>;

/** Each field's column under a table alias (`p.document_id`), typed to the letter. */
export type Qualified<M extends ColumnMap, A extends string> = { readonly [F in keyof M]: `${A}.${M[F]['column']}` };

export function qualified<M extends ColumnMap, A extends string>(map: M, alias: A): Qualified<M, A> {
  return Object.fromEntries(Object.entries(map).map(([field, c]) => [field, `${alias}.${c.column}`])) as Qualified<M, A>;
}

/** The map's fields, in its order. */
export const fieldsOf = <M extends ColumnMap>(map: M): (keyof M & string)[] => Object.keys(map);

/**
 * A SELECT (or RETURNING) list of the fields (all by default), each under its field name:
 * `p.document_id AS "documentId"`; alias '' for columns of the statement's one table.
 */
export function selectList<M extends ColumnMap>(map: M, alias: string, fields: readonly (keyof M & string)[] = fieldsOf(map)): string {
  const at = alias ? `${alias}.` : '';
  return fields
    .map((f) => {
      const { column, readAs } = map[f];
      if (readAs) return `${at}${column}::${readAs} AS "${f}"`;
      return column === f ? `${at}${f}` : `${at}${column} AS "${f}"`;
    })
    .join(', ');
}

/** Every passage column, as the API reads it (PassageRow). */
export const PASSAGE_COLUMNS = selectList(PASSAGE_ROW, 'p');
/** Every document column, as the API reads it (DocumentRow, metadata and timestamps as the driver gives them). */
export const DOCUMENT_COLUMNS = selectList(DOCUMENT_ROW, 'd');

/** The fields of a map that ingest writes (Column.ingested). */
export type Ingested<M extends ColumnMap> = { [F in keyof M]: M[F] extends { readonly ingested: true } ? F : never }[keyof M] & string;

/**
 * How ingest writes a row shape's ingested columns (write.ts, bulk-write.ts, bulk-links.ts), in
 * the map's order: prepared rows go to the statement as JSON records named by column, read back
 * through jsonb_to_recordset (arrays as JSON arrays), or as one parameter a column.
 */
export interface IngestColumns<R, F extends keyof R & string> {
  /** The columns: `ordinal, text, title_path, word_count`. */
  readonly names: string;
  /** jsonb_to_recordset's column definitions: `ordinal int, …, title_path jsonb`. */
  readonly definitions: string;
  /** How many columns (parameters after them are numbered on from here). */
  readonly count: number;
  /** Each column's value read from record alias `r`, as `names` lists them; `instead` gives some another expression. */
  values(r: string, instead?: Partial<Record<F, string>>): string;
  /** `column = value` for each column but those `except`: read from record alias `r`, or given field by field. */
  assignments(from: string | Readonly<Record<F, string>>, except: readonly F[]): string;
  /** The columns as parameters from `$first` on (JSON ones cast: they travel as text), in `names` order. */
  placeholders(first: number): Readonly<Record<F, string>>;
  /** A prepared row's ingested fields (typed as the row's) as a record keyed by column. */
  record(row: Pick<R, F>): Record<string, unknown>;
  /** A prepared row's ingested fields as parameters (`placeholders`' order; JSON as its text). */
  params(row: Pick<R, F>): unknown[];
}

export function ingestColumns<R, M extends Columns<R> & ColumnMap>(map: M): IngestColumns<R, Ingested<M> & keyof R> {
  type F = Ingested<M> & keyof R;
  const fields = fieldsOf(map).filter((f) => map[f].ingested) as F[];
  const column = (f: F) => map[f].column;
  const array = (f: F) => map[f].type.endsWith('[]');
  const value = (r: string, f: F) => (array(f) ? `ARRAY(SELECT jsonb_array_elements_text(${r}.${column(f)}))` : `${r}.${column(f)}`);
  return {
    names: fields.map(column).join(', '),
    definitions: fields.map((f) => `${column(f)} ${array(f) ? 'jsonb' : map[f].type}`).join(', '),
    count: fields.length,
    values: (r, instead = {}) => fields.map((f) => instead[f] ?? value(r, f)).join(', '),
    assignments: (from, except) =>
      fields
        .filter((f) => !except.includes(f))
        .map((f) => `${column(f)} = ${typeof from === 'string' ? value(from, f) : from[f]}`)
        .join(', '),
    placeholders: (first) => Object.fromEntries(fields.map((f, i) => [f, `$${first + i}${map[f].type === 'jsonb' ? '::jsonb' : ''}`])) as Record<F, string>,
    record: (row) => Object.fromEntries(fields.map((f) => [column(f), row[f]])),
    params: (row) => fields.map((f) => (map[f].type === 'jsonb' ? JSON.stringify(row[f]) : row[f])),
  };
}

/** What ingest writes of each row shape. */
export const DOCUMENT_WRITE = ingestColumns<DocumentRow, typeof DOCUMENT_ROW>(DOCUMENT_ROW);
export const SECTION_WRITE = ingestColumns<SectionRow, typeof SECTION_ROW>(SECTION_ROW);
export const PASSAGE_WRITE = ingestColumns<PassageRow, typeof PASSAGE_ROW>(PASSAGE_ROW);
export const LINK_WRITE = ingestColumns<LinkRow, typeof LINK_ROW>(LINK_ROW);
