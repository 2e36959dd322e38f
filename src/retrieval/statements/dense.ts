import type { SearchInput } from '../types';
import type { Params } from './params';
import { DOCUMENTS_JSON, distance, filterJoin, filterSql, innerProduct, NO_DOCUMENTS, PASSAGES_JSON, type ModeStatement } from './parts';

/** Stage 1 of DHR: the top-`limit` documents by E_Q^φ(q)·E_D^φ(d) (columns document_id, document_score). */
export function documentStage(s: SearchInput, p: Params, exact: boolean, limit = s.k1): string {
  const dim = s.documentModel.dimension;
  const q = p.addVector(s.questionForDocuments);
  return `SELECT e.document_id, ${innerProduct('e.embedding', dim, q)} AS document_score
    FROM document_embeddings e${filterJoin(s, 'e.document_id')}
    WHERE e.model_id = ${p.add(s.documentModel.id)}${filterSql(p, s.filter)}
    ORDER BY ${distance('e.embedding', dim, q, exact)} LIMIT ${p.add(limit)}`;
}

/** Passage ANN over the whole corpus (columns passage_id, document_id, passage_score). */
export function passageStage(s: SearchInput, p: Params, limit: number, exact: boolean): string {
  const dim = s.passageModel.dimension;
  const q = p.addVector(s.questionForPassages);
  return `SELECT e.passage_id, e.document_id, ${innerProduct('e.embedding', dim, q)} AS passage_score
    FROM passage_embeddings e${filterJoin(s, 'e.document_id')}
    WHERE e.model_id = ${p.add(s.passageModel.id)}${filterSql(p, s.filter)}
    ORDER BY ${distance('e.embedding', dim, q, exact)} LIMIT ${p.add(limit)}`;
}

const DENSE_DOCS = (from: string) => `SELECT document_id, document_score, document_score AS document_dense, NULL::float8 AS document_lexical FROM ${from}`;

/** DHR serial: documents by ANN, then every passage of those documents scored exactly, fused. */
export function hierarchical(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const dim = s.passageModel.dimension;
  const q = p.addVector(s.questionForPassages);
  const stage = documentStage(s, p, exact);
  const sql = `WITH docs AS MATERIALIZED (${stage}),
  candidates AS (
    SELECT pe.passage_id, pe.document_id, ${innerProduct('pe.embedding', dim, q)} AS passage_score, docs.document_score
    FROM docs JOIN passage_embeddings pe ON pe.model_id = ${p.add(s.passageModel.id)} AND pe.document_id = docs.document_id
  ),
  fused AS (
    SELECT passage_id, document_id, passage_score, document_score,
           passage_score + ${p.add(s.lambda)}::float8 * document_score AS score,
           passage_score AS dense_score, NULL::float8 AS lexical_score,
           document_score AS document_dense, NULL::float8 AS document_lexical
    FROM candidates
  )
  SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${DOCUMENTS_JSON(`(${DENSE_DOCS('docs')}) d`)} AS documents`;
  return { sql, annRows: s.k1 };
}

/**
 * DHR "para rerank": the top max(k1, k2) passages over the whole corpus (so k2 results come
 * back whenever they exist), each fused with its document's score.
 */
export function parallel(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const candidates = Math.max(s.k1, s.k2);
  const dim = s.documentModel.dimension;
  const stage = passageStage(s, p, candidates, exact);
  const qd = p.addVector(s.questionForDocuments);
  const sql = `WITH hits AS MATERIALIZED (${stage}),
    docs AS (
      SELECT de.document_id, ${innerProduct('de.embedding', dim, qd)} AS document_score
      FROM (SELECT DISTINCT document_id FROM hits) h
      JOIN document_embeddings de ON de.model_id = ${p.add(s.documentModel.id)} AND de.document_id = h.document_id
    ),
    fused AS (
      SELECT hits.passage_id, hits.document_id, hits.passage_score, docs.document_score,
             hits.passage_score + ${p.add(s.lambda)}::float8 * coalesce(docs.document_score, 0) AS score,
             hits.passage_score AS dense_score, NULL::float8 AS lexical_score,
             docs.document_score AS document_dense, NULL::float8 AS document_lexical
      FROM hits LEFT JOIN docs ON docs.document_id = hits.document_id
    )
    SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${DOCUMENTS_JSON(`(${DENSE_DOCS('docs')}) d`)} AS documents`;
  return { sql, annRows: candidates };
}

/** DPR baseline: the top k2 passages by ANN, no document score. */
export function flat(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const sql = `WITH hits AS MATERIALIZED (${passageStage(s, p, s.k2, exact)}),
    fused AS (SELECT passage_id, document_id, passage_score, NULL::float8 AS document_score, passage_score AS score,
                     passage_score AS dense_score, NULL::float8 AS lexical_score,
                     NULL::float8 AS document_dense, NULL::float8 AS document_lexical FROM hits)
    SELECT ${PASSAGES_JSON('fused', s, p)} AS passages, ${NO_DOCUMENTS} AS documents`;
  return { sql, annRows: s.k2 };
}

/** DHR-D alone: the top-k1 documents. */
export function documents(s: SearchInput, p: Params, exact: boolean): ModeStatement {
  const sql = `WITH docs AS MATERIALIZED (${documentStage(s, p, exact)})
    SELECT '[]'::json AS passages, ${DOCUMENTS_JSON(`(${DENSE_DOCS('docs')}) d`)} AS documents`;
  return { sql, annRows: s.k1 };
}
