import type { SearchInput } from '../types';
import type { Params } from './params';
import { filterSql } from './parts';

/**
 * Question → document linking by name. A document's names are its title and its title head (the
 * title before a parenthesis, comma, colon or dash), each as the set of its English lexemes; a
 * question names a document when it holds every lexeme of one of its names. Set containment on
 * lexemes, not a phrase match: the BM25 analysis already drops stop words and case, and a GIN index
 * answers `name <@ question` (migration 0025, whose expressions these must equal).
 * Only the longest names found are kept (most lexemes): "South Korea" links "Korea, South", not
 * also "Korea, North" by its head; "Papua New Guinea" not also "Guinea".
 */
export const TITLE_LEXEMES = `tsvector_to_array(to_tsvector('english'::regconfig, d.title))`;
export const TITLE_HEAD_LEXEMES = `tsvector_to_array(to_tsvector('english'::regconfig, regexp_replace(d.title, '\\s*(\\(|,|:|;|—|–|--| - ).*$', '')))`;

/**
 * CTEs `link_names` and `linked` (document_id, lexemes: the name found): the documents the
 * question names, the longest names only. Needs `qterms` (termCtes).
 */
export function titleLinkCtes(s: SearchInput, p: Params): string {
  const q = `(SELECT coalesce(array_agg(lexeme::text), '{}') FROM qterms)`;
  const names = (expression: string) =>
    `SELECT d.id AS document_id, ${expression} AS lexemes FROM documents d
        WHERE ${expression} <@ ${q} AND ${expression} <> '{}'${filterSql(p, s.filter)}`;
  return `link_names AS MATERIALIZED (
      ${names(TITLE_LEXEMES)}
      UNION ${names(TITLE_HEAD_LEXEMES)}),
    linked AS MATERIALIZED (
      SELECT DISTINCT ON (document_id) document_id, lexemes FROM link_names
      WHERE cardinality(lexemes) = (SELECT max(cardinality(lexemes)) FROM link_names)
      ORDER BY document_id)`;
}

/**
 * CTE `stage2_terms`: pterms without the lexemes of the names in `named` (document_id, lexemes),
 * or all of pterms when that leaves none. Stage 1 has explained the entity the question names, so
 * stage 2 scores what it asks of it; otherwise the passage that repeats the entity's name (a
 * "Country name" section) beats the one that holds the attribute.
 */
export function stage2TermCtes(named: string): string {
  return `mention AS MATERIALIZED (SELECT DISTINCT m.lexeme FROM ${named}, unnest(${named}.lexemes) AS m(lexeme)),
    stage2_terms AS MATERIALIZED (
      SELECT t.* FROM pterms t WHERE t.lexeme::text NOT IN (SELECT lexeme FROM mention)
      UNION ALL
      SELECT t.* FROM pterms t WHERE NOT EXISTS (SELECT 1 FROM pterms u WHERE u.lexeme::text NOT IN (SELECT lexeme FROM mention)))`;
}
