import type { SearchInput } from '../types';
import type { Params } from './params';
import { filterSql } from './parts';

/**
 * Question → document linking by name. A document's names are its title and its title head (the
 * title before a parenthesis, comma, colon or dash), each stored as the set of its English
 * lexemes, a tsvector without positions (migration 0025); a question names a document when a run
 * of at most MAX_NAME_LEXEMES of its lexemes (in reading order, stop words dropped), as such a set,
 * is one of its names: "What is the capital of South Korea?" holds 'korea' 'south', the name of
 * "Korea, South". Only the longest names found are kept (most lexemes): that question does not
 * also link "Korea, North" by its head "korea"; "Papua New Guinea" not also "Guinea".
 */
export const MAX_NAME_LEXEMES = 6;

/**
 * CTEs `qgrams` (the question's runs of lexemes as names), `link_names` and `linked`
 * (document_id, lexemes: the name found, longest only). The question's lexemes in reading order
 * come from its tsvector's positions; array_to_tsvector makes a run a set as the stored names are.
 */
export function titleLinkCtes(s: SearchInput, p: Params): string {
  const q = p.add(s.questionText ?? '');
  const names = (column: string) =>
    `SELECT d.id AS document_id, tsvector_to_array(d.${column}) AS lexemes FROM documents d
        WHERE d.${column} = ANY((SELECT array_agg(name) FROM qgrams)::tsvector[]) AND length(d.${column}) > 0${filterSql(p, s.filter)}`;
  return `qseq AS MATERIALIZED (
      SELECT t.lexeme::text AS lexeme, row_number() OVER (ORDER BY pos) AS i
      FROM unnest(to_tsvector('english'::regconfig, ${q}::text)) t, unnest(t.positions) AS pos),
    qgrams AS MATERIALIZED (
      SELECT DISTINCT (SELECT array_to_tsvector(array_agg(DISTINCT b.lexeme)) FROM qseq b WHERE b.i BETWEEN a.i AND a.i + n - 1) AS name
      FROM qseq a CROSS JOIN generate_series(1, ${MAX_NAME_LEXEMES}) AS n WHERE a.i + n - 1 <= (SELECT max(i) FROM qseq)),
    link_names AS MATERIALIZED (
      ${names('title_name')}
      UNION ${names('title_head_name')}),
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

/**
 * The statement that finds, before the search, the names a question holds as lexeme sets (the
 * same lookup as titleLinkCtes' `linked`, unconfirmed) and the lexemes of each of the question's
 * words, so that the question can be encoded again without those words (titleLinkDense).
 */
export function questionNamesStatement(question: string, words: readonly string[], filter: SearchInput['filter'], p: Params): string {
  const ctes = titleLinkCtes({ questionText: question, filter } as SearchInput, p);
  return `WITH ${ctes}
    SELECT coalesce((SELECT json_agg(lexemes) FROM linked), '[]') AS names,
           coalesce((SELECT json_agg(tsvector_to_array(to_tsvector('english'::regconfig, w)) ORDER BY i)
                     FROM unnest(${p.add(words)}::text[]) WITH ORDINALITY AS u(w, i)), '[]') AS words`;
}
