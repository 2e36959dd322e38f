import type { SearchInput } from '../types';
import { documentTop, passageTop, termCtes } from './bm25';
import type { Params } from './params';
import { DOCUMENTS_JSON, NO_DOCUMENTS, PASSAGES_JSON, type ModeStatement } from './parts';

/** Passage BM25 over title path + text: the top k2 passages. */
export function lexical(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const sql = `WITH ${termCtes(s, p, { passages: true })},
    hits AS MATERIALIZED (${passageTop(s, p, s.k2, exact)}),
    fused AS (SELECT passage_id, document_id, lexical AS passage_score, NULL::float8 AS document_score, lexical AS score,
                     NULL::float8 AS dense_score, lexical AS lexical_score,
                     NULL::float8 AS document_dense, NULL::float8 AS document_lexical FROM hits)
    SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${NO_DOCUMENTS} AS documents, (SELECT count(*) FROM qterms)::int AS question_terms`;
  return { sql };
}

/** Document BM25F (summary and full text): the top-k1 documents. */
export function lexicalDocuments(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const sql = `WITH ${termCtes(s, p, { documents: true })},
    docs AS MATERIALIZED (SELECT document_id, lexical AS document_score, NULL::float8 AS document_dense, lexical AS document_lexical
                          FROM (${documentTop(s, p, s.k1, exact)}) t)
    SELECT '[]'::json AS passages, ${DOCUMENTS_JSON('docs')} AS documents, (SELECT count(*) FROM qterms)::int AS question_terms`;
  return { sql };
}
