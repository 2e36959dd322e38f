import { vectorLiteral } from '../store/embeddings';
import { DEFAULT_EF_FACTOR, DEFAULT_EF_SEARCH, DEFAULT_MAX_SCAN_TUPLES, RRF_K, type RetrievalFilter, type VectorSearch } from './types';

/**
 * One statement per mode. Stage results come back as JSON columns so a whole retrieval is one
 * round trip. Vectors are compared as `embedding::vector(dim)` so the per-model partial HNSW
 * index applies; `<#>` is the negative inner product, so scores are `-(a <#> b)`.
 */
export interface SearchStatement {
  sql: string;
  params: unknown[];
  /** Session settings the statement needs (every search sends all of them: see Database.queryWithSettings). */
  settings: Record<string, string>;
}

/** How a question vector is sent: a text literal by default; the PostgreSQL client sends binary. */
export type VectorParam = (vector: Float32Array) => unknown;

class Params {
  readonly values: unknown[] = [];
  private readonly vectors = new Map<Float32Array, string>();
  constructor(private readonly vectorParam: VectorParam) {}
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** One parameter per distinct question vector: with one question model, both stages share it. */
  addVector(vector: Float32Array | undefined): string {
    if (!vector) throw new Error('this mode needs the question vector');
    let ref = this.vectors.get(vector);
    if (!ref) {
      ref = this.add(this.vectorParam(vector));
      this.vectors.set(vector, ref);
    }
    return ref;
  }
}

/** Filter on documents `d`, applied inside the SQL. */
function filterSql(p: Params, filter: RetrievalFilter | undefined): string {
  if (!filter) return '';
  const clauses: string[] = [];
  if (filter.documentIds) clauses.push(`d.id = ANY(${p.add(filter.documentIds)}::int[])`);
  if (filter.sources) clauses.push(`d.source = ANY(${p.add(filter.sources)}::text[])`);
  if (filter.metadata) clauses.push(`d.metadata @> ${p.add(JSON.stringify(filter.metadata))}::jsonb`);
  return clauses.map((c) => ` AND ${c}`).join('');
}

const hasFilter = (f: RetrievalFilter | undefined) => !!f && (!!f.documentIds || !!f.sources || !!f.metadata);

/**
 * Ordering expression for an ANN stage. With `exact`, `+ 0` keeps the planner off the index, so
 * every candidate is scored (sequential scan).
 */
function distance(column: string, dim: number, query: string, exact: boolean): string {
  return `(${column}::vector(${dim}) <#> ${query}::vector(${dim}))${exact ? ' + 0' : ''}`;
}

/** Stage 1 of DHR: the top-k1 documents by E_Q^φ(q)·E_D^φ(d). */
function documentStage(s: VectorSearch, p: Params, exact: boolean): string {
  const dim = s.documentModel.dimension;
  const q = p.addVector(s.questionForDocuments);
  const join = hasFilter(s.filter) ? ' JOIN documents d ON d.id = e.document_id' : '';
  return `SELECT e.document_id, -(e.embedding::vector(${dim}) <#> ${q}::vector(${dim})) AS document_score
    FROM document_embeddings e${join}
    WHERE e.model_id = ${p.add(s.documentModel.id)}${filterSql(p, s.filter)}
    ORDER BY ${distance('e.embedding', dim, q, exact)} LIMIT ${p.add(s.k1)}`;
}

/** Passage ANN over the whole corpus (PARALLEL's first stage, FLAT). */
function passageStage(s: VectorSearch, p: Params, limit: number, exact: boolean): string {
  const dim = s.passageModel.dimension;
  const q = p.addVector(s.questionForPassages);
  const join = hasFilter(s.filter) ? ' JOIN documents d ON d.id = e.document_id' : '';
  return `SELECT e.passage_id, e.document_id, -(e.embedding::vector(${dim}) <#> ${q}::vector(${dim})) AS passage_score
    FROM passage_embeddings e${join}
    WHERE e.model_id = ${p.add(s.passageModel.id)}${filterSql(p, s.filter)}
    ORDER BY ${distance('e.embedding', dim, q, exact)} LIMIT ${p.add(limit)}`;
}

/** DHR serial: documents by ANN, then every passage of those documents scored exactly, fused. */
function hierarchicalCtes(s: VectorSearch, p: Params, exact: boolean): string {
  const dim = s.passageModel.dimension;
  const q = p.addVector(s.questionForPassages);
  return `docs AS MATERIALIZED (${documentStage(s, p, exact)}),
  candidates AS (
    SELECT pe.passage_id, pe.document_id, -(pe.embedding::vector(${dim}) <#> ${q}::vector(${dim})) AS passage_score,
           docs.document_score
    FROM docs JOIN passage_embeddings pe ON pe.model_id = ${p.add(s.passageModel.id)} AND pe.document_id = docs.document_id
  ),
  fused AS (
    SELECT passage_id, document_id, passage_score, document_score,
           passage_score + ${p.add(s.lambda)}::float8 * document_score AS score
    FROM candidates
  )`;
}

const PASSAGES_JSON = (from: string, limit: string) => `(SELECT coalesce(json_agg(json_build_object(
    'passageId', passage_id, 'documentId', document_id, 'score', score,
    'passageScore', passage_score, 'documentScore', document_score) ORDER BY score DESC, passage_id), '[]'::json)
  FROM (SELECT * FROM ${from} ORDER BY score DESC, passage_id LIMIT ${limit}) top)`;

const DOCUMENTS_JSON = (from: string) => `(SELECT coalesce(json_agg(json_build_object(
    'documentId', document_id, 'score', document_score) ORDER BY document_score DESC, document_id), '[]'::json) FROM ${from})`;

/** Lexical: PostgreSQL full-text search over title path + text; any question term may match (OR). */
function lexicalCte(s: VectorSearch, p: Params, limit: string): string {
  const question = p.add(s.questionText ?? '');
  return `lexical AS (
    SELECT ps.id AS passage_id, ps.document_id, ts_rank_cd(ps.search, tsq.query) AS score
    FROM (SELECT replace(plainto_tsquery('english', ${question})::text, '&', '|')::tsquery AS query) tsq
    JOIN passages ps ON ps.search @@ tsq.query
    JOIN documents d ON d.id = ps.document_id
    WHERE true${filterSql(p, s.filter)}
    ORDER BY score DESC, ps.id LIMIT ${limit}
  )`;
}

export function searchStatement(s: VectorSearch, vectorParam: VectorParam = vectorLiteral): SearchStatement {
  const p = new Params(vectorParam);
  const exact = s.exact === true;
  // ef_search grows with the rows a stage returns (DEFAULT_EF_FACTOR); pgvector caps it at 1000.
  const factor = s.efFactor ?? DEFAULT_EF_FACTOR;
  const ef = (rows: number) => String(Math.min(1000, Math.max(s.efSearch ?? DEFAULT_EF_SEARCH, Math.ceil(factor * rows))));
  // Filters are applied after the index scan: iterative scans keep searching until enough rows pass.
  // Every search sends every setting, so none lingers on a pooled connection from another search.
  const settings: Record<string, string> = {
    'hnsw.iterative_scan': s.iterativeScan ?? 'strict_order',
    'hnsw.max_scan_tuples': String(s.maxScanTuples ?? DEFAULT_MAX_SCAN_TUPLES),
  };
  let sql: string;
  switch (s.mode) {
    case 'HIERARCHICAL': {
      settings['hnsw.ef_search'] = ef(s.k1);
      const ctes = hierarchicalCtes(s, p, exact);
      sql = `WITH ${ctes}
        SELECT ${PASSAGES_JSON('fused', p.add(s.k2))} AS passages, ${DOCUMENTS_JSON('docs')} AS documents`;
      break;
    }
    case 'PARALLEL': {
      // DHR "para rerank": the top max(k1, k2) passages over the whole corpus (so k2 results come
      // back whenever they exist), each fused with its document's score.
      const candidates = Math.max(s.k1, s.k2);
      settings['hnsw.ef_search'] = ef(candidates);
      const dim = s.documentModel.dimension;
      const stage = passageStage(s, p, candidates, exact);
      const qd = p.addVector(s.questionForDocuments);
      const model = p.add(s.documentModel.id);
      sql = `WITH hits AS MATERIALIZED (${stage}),
        docs AS (
          SELECT de.document_id, -(de.embedding::vector(${dim}) <#> ${qd}::vector(${dim})) AS document_score
          FROM (SELECT DISTINCT document_id FROM hits) h
          JOIN document_embeddings de ON de.model_id = ${model} AND de.document_id = h.document_id
        ),
        fused AS (
          SELECT hits.passage_id, hits.document_id, hits.passage_score, docs.document_score,
                 hits.passage_score + ${p.add(s.lambda)}::float8 * coalesce(docs.document_score, 0) AS score
          FROM hits LEFT JOIN docs ON docs.document_id = hits.document_id
        )
        SELECT ${PASSAGES_JSON('fused', p.add(s.k2))} AS passages, ${DOCUMENTS_JSON('docs')} AS documents`;
      break;
    }
    case 'FLAT': {
      settings['hnsw.ef_search'] = ef(s.k2);
      const stage = passageStage(s, p, s.k2, exact);
      sql = `WITH hits AS MATERIALIZED (${stage}),
        fused AS (SELECT passage_id, document_id, passage_score, NULL::float8 AS document_score, passage_score AS score FROM hits)
        SELECT ${PASSAGES_JSON('fused', p.add(s.k2))} AS passages, '[]'::json AS documents`;
      break;
    }
    case 'DOCUMENTS': {
      settings['hnsw.ef_search'] = ef(s.k1);
      sql = `WITH docs AS MATERIALIZED (${documentStage(s, p, exact)})
        SELECT '[]'::json AS passages, ${DOCUMENTS_JSON('docs')} AS documents`;
      break;
    }
    case 'LEXICAL': {
      const k2 = p.add(s.k2);
      sql = `WITH ${lexicalCte(s, p, k2)},
        fused AS (SELECT passage_id, document_id, score AS passage_score, NULL::float8 AS document_score, score FROM lexical)
        SELECT ${PASSAGES_JSON('fused', k2)} AS passages, '[]'::json AS documents`;
      break;
    }
    case 'HYBRID': {
      // Reciprocal rank fusion of the lexical and the hierarchical rankings (top max(k1, k2) of
      // each, so k2 results come back whenever they exist).
      settings['hnsw.ef_search'] = ef(s.k1);
      const ctes = hierarchicalCtes(s, p, exact);
      const k1 = p.add(Math.max(s.k1, s.k2));
      sql = `WITH ${ctes},
        dense AS (SELECT *, row_number() OVER (ORDER BY score DESC, passage_id) AS r FROM (SELECT * FROM fused ORDER BY score DESC, passage_id LIMIT ${k1}) f),
        ${lexicalCte(s, p, k1)},
        lex AS (SELECT *, row_number() OVER (ORDER BY score DESC, passage_id) AS r FROM lexical),
        rrf AS (
          SELECT coalesce(dense.passage_id, lex.passage_id) AS passage_id,
                 coalesce(dense.document_id, lex.document_id) AS document_id,
                 dense.passage_score, dense.document_score,
                 coalesce(1.0 / (${RRF_K} + dense.r), 0) + coalesce(1.0 / (${RRF_K} + lex.r), 0) AS score
          FROM dense FULL JOIN lex ON lex.passage_id = dense.passage_id
        )
        SELECT ${PASSAGES_JSON('rrf', p.add(s.k2))} AS passages, ${DOCUMENTS_JSON('docs')} AS documents`;
      break;
    }
  }
  return { sql, params: p.values, settings };
}
