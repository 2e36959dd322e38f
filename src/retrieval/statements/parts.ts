import type { RetrievalFilter, SearchInput } from '../types';
import type { Params } from './params';

/** What a mode's builder returns: the statement and the HNSW settings its stages need. */
export interface ModeStatement {
  sql: string;
  /** hnsw.ef_search for the mode's ANN stage, when it has one (rows that stage returns). */
  annRows?: number;
}

/** Filter on documents `d`, applied inside the SQL. */
export function filterSql(p: Params, filter: RetrievalFilter | undefined): string {
  if (!filter) return '';
  const clauses: string[] = [];
  if (filter.documentIds) clauses.push(`d.id = ANY(${p.add(filter.documentIds)}::int[])`);
  if (filter.sources) clauses.push(`d.source = ANY(${p.add(filter.sources)}::text[])`);
  if (filter.metadata) clauses.push(`d.metadata @> ${p.add(JSON.stringify(filter.metadata))}::jsonb`);
  return clauses.map((c) => ` AND ${c}`).join('');
}

export const hasFilter = (f: RetrievalFilter | undefined) => !!f && (!!f.documentIds || !!f.sources || !!f.metadata);

/** A join to documents `d` when a filter needs it. */
export const filterJoin = (s: SearchInput, on: string) => (hasFilter(s.filter) ? ` JOIN documents d ON d.id = ${on}` : '');

/**
 * Rows of an item read by their key, one probe (an index range) each: postings by (lexeme,
 * document_id, …), a document's passages or vectors by document_id. The work is bounded by the
 * items, where a join may be planned as a hash join over the whole table: over every posting of a
 * common term (bench:hybrid at 100k: docs/benchmarks.md), or over every passage and vector of the
 * store where PGlite, which never gathers statistics, misjudges a table's size (the Factbook demo:
 * 42,289 passages and vectors read to score 2,002). OFFSET 0 keeps the planner from flattening the
 * probe back into that join. Citus gets the plain join, which it pushes down to the shards (a
 * correlated LATERAL it cannot).
 */
export const probeJoin = (s: SearchInput, table: string, alias: string, columns: string, on: string) =>
  s.distributed ? `JOIN ${table} ${alias} ON ${on}` : `CROSS JOIN LATERAL (SELECT ${columns} FROM ${table} ${alias} WHERE ${on} OFFSET 0) ${alias}`;

/**
 * Ordering expression for an ANN stage. With `exact`, `+ 0` keeps the planner off the index, so
 * every candidate is scored (sequential scan).
 */
export function distance(column: string, dim: number, query: string, exact: boolean): string {
  return `(${column}::vector(${dim}) <#> ${query}::vector(${dim}))${exact ? ' + 0' : ''}`;
}

/** Inner product of a stored vector with the question (pgvector's `<#>` is its negative). */
export const innerProduct = (column: string, dim: number, query: string) => `-(${column}::vector(${dim}) <#> ${query}::vector(${dim}))`;

/**
 * Min-max normalization over the stage's candidates (window over the whole CTE), so the dense
 * and lexical scales meet in [0, 1] on every corpus; a missing score (no vector yet) counts as the
 * stage's minimum. When every candidate has the same score, the signal cannot tell them apart: 0.
 */
export const minMax = (column: string) => minMaxWithin(column, `min(${column}) OVER ()`, `max(${column}) OVER ()`);

/** minMax with the bounds given (stage 2 by candidates keeps its whole stage's: hybrid.ts). */
export const minMaxWithin = (column: string, lo: string, hi: string) =>
  `coalesce(CASE WHEN ${hi} > ${lo} THEN (${column} - ${lo}) / (${hi} - ${lo}) ELSE 0 END, 0)`;

/**
 * Every ranked CTE (`from`) has these columns: passage_id, document_id, score, passage_score,
 * document_score, dense_score, lexical_score, document_dense, document_lexical.
 */
export const PASSAGES_JSON = (
  from: string,
  s: Pick<SearchInput, 'k2' | 'perDocument' | 'perDocumentDecay' | 'withoutPassages'>,
  p: Params,
) => `(SELECT coalesce(json_agg(json_build_object(
    'passageId', passage_id, 'documentId', document_id, 'score', score,
    'passageScore', passage_score, 'documentScore', document_score,
    'denseScore', dense_score, 'lexicalScore', lexical_score,
    'documentDenseScore', document_dense, 'documentLexicalScore', document_lexical) ORDER BY score DESC, passage_id), '[]'::json)
  FROM (SELECT * FROM ${perDocumentBound(without(from, s, p), s, p)} ORDER BY score DESC, passage_id LIMIT ${p.add(s.k2)}) top)`;

/**
 * The ranked passages less `withoutPassages`, left out before the bound per document so that one
 * left out neither takes a document's place nor its decay (a cloze question's own passage would
 * otherwise push its section's other passages, its gold, down or out).
 */
function without(from: string, s: Pick<SearchInput, 'withoutPassages'>, p: Params): string {
  if (!s.withoutPassages?.length) return from;
  return `(SELECT * FROM ${from} WHERE passage_id <> ALL(${p.add([...s.withoutPassages])}::int[])) kept`;
}

/**
 * At most perDocument passages of one document among the ranked ones (its best by score), so a
 * few long documents cannot fill the top k2 (docs/eval: the Python docs' "passages per document"
 * sweep); and, with perDocumentDecay, a softer form: a document's n-th best passage loses
 * (n − 1)·decay of its score, which ranks by. The bound applies to the candidates the mode scored: a
 * mode whose candidates are the top k2 passages (FLAT, LEXICAL) then returns fewer than k2.
 * Only a passage whose own score reaches the k2-th best document's best (`floor`) can reach the top
 * k2: those k2 documents' best passages keep their scores and the bound keeps them, the others only
 * lose. A passage above the floor has its document's better passages above it too, so its place in
 * its document is the same counted among those alone. So the window sorts those passages only (the
 * Factbook demo without a budget: 16,000 candidates; bench:demo-store, docs/benchmarks.md).
 */
function perDocumentBound(from: string, s: Pick<SearchInput, 'k2' | 'perDocument' | 'perDocumentDecay'>, p: Params): string {
  const decay = s.perDocumentDecay ?? 0;
  if (s.perDocument === undefined && decay === 0) return from;
  const k2 = p.add(s.k2);
  const floor = `(SELECT CASE WHEN count(*) < ${k2} THEN '-Infinity'::float8 ELSE min(best) END
      FROM (SELECT max(score) AS best FROM ${from} GROUP BY document_id ORDER BY best DESC LIMIT ${k2}) b)`;
  const ranked = `(SELECT *, row_number() OVER (PARTITION BY document_id ORDER BY score DESC, passage_id) AS document_rank
      FROM ${from} WHERE (score < ${floor}) IS NOT TRUE) ranked`;
  const bounded = s.perDocument === undefined ? '' : `WHERE document_rank <= ${p.add(s.perDocument)}`;
  if (decay === 0) return `(SELECT * FROM ${ranked} ${bounded}) bounded`;
  return `(SELECT passage_id, document_id, score - ${p.add(decay)}::float8 * (document_rank - 1) AS score, passage_score, document_score,
      dense_score, lexical_score, document_dense, document_lexical FROM ${ranked} ${bounded}) bounded`;
}

/** Documents CTEs have document_id, document_score, document_dense, document_lexical. */
export const DOCUMENTS_JSON = (from: string) => `(SELECT coalesce(json_agg(json_build_object(
    'documentId', document_id, 'score', document_score, 'denseScore', document_dense, 'lexicalScore', document_lexical)
    ORDER BY document_score DESC, document_id), '[]'::json) FROM ${from})`;

export const NO_PASSAGES = `'[]'::json`;
export const NO_DOCUMENTS = `'[]'::json`;
