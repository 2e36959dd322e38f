import { vectorLiteral } from '../store/embeddings';
import { MODES, type RetrievalMode } from './modes';
import { Params, type VectorParam } from './statements/params';
import { withRows, type RowFetch } from './statements/rows';
import { DEFAULT_EF_FACTOR, DEFAULT_EF_SEARCH, DEFAULT_MAX_SCAN_TUPLES, type SearchInput } from './types';

export type { VectorParam } from './statements/params';

/**
 * One statement per mode (built by the mode's entry in MODES). Stage results come back as JSON
 * columns so a whole retrieval is one round trip. Vectors are compared as `embedding::vector(dim)`
 * so the per-model partial HNSW index applies; `<#>` is the negative inner product, so scores are
 * `-(a <#> b)`.
 */
export interface SearchStatement {
  sql: string;
  params: unknown[];
  /** Session settings the statement needs (every search sends all of them: see Database.queryWithSettings). */
  settings: Record<string, string>;
}

export interface VectorSearch extends SearchInput {
  mode: RetrievalMode;
  /** Columns of the ranked rows to return with the ranking (same statement, same snapshot). */
  rows?: RowFetch;
}

export function searchStatement(s: VectorSearch, vectorParam: VectorParam = vectorLiteral): SearchStatement {
  const p = new Params(vectorParam);
  const { sql, annRows } = MODES[s.mode].build(s, p, s.exact === true);
  // Filters are applied after the index scan: iterative scans keep searching until enough rows pass.
  // Every search sends every setting, so none lingers on a pooled connection from another search.
  const settings: Record<string, string> = {
    'hnsw.iterative_scan': s.iterativeScan ?? 'strict_order',
    'hnsw.max_scan_tuples': String(s.maxScanTuples ?? DEFAULT_MAX_SCAN_TUPLES),
  };
  if (annRows !== undefined) {
    // ef_search grows with the rows the ANN stage returns (DEFAULT_EF_FACTOR); pgvector caps it at 1000.
    const factor = s.efFactor ?? DEFAULT_EF_FACTOR;
    settings['hnsw.ef_search'] = String(Math.min(1000, Math.max(s.efSearch ?? DEFAULT_EF_SEARCH, Math.ceil(factor * annRows))));
  }
  return { sql: withRows(sql, s.rows), params: p.values, settings };
}
