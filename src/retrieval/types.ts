/** DHR retrieval modes (paper §3.5 and its baselines), all answered by one SQL statement each. */
export const RETRIEVAL_MODES = ['HIERARCHICAL', 'PARALLEL', 'FLAT', 'DOCUMENTS', 'LEXICAL', 'HYBRID'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];

export interface RetrievalFilter {
  documentIds?: number[];
  sources?: string[];
  /** Documents whose metadata contains these key/values (jsonb @>). */
  metadata?: Record<string, unknown>;
}

export interface ModelRef {
  id: number;
  dimension: number;
}

/** A search over stored vectors: the question is already encoded (once per distinct question model). */
export interface VectorSearch {
  mode: RetrievalMode;
  /** The model of document vectors (E_D^φ) and of passage vectors (E_P^ψ). */
  documentModel: ModelRef;
  passageModel: ModelRef;
  /** E_Q^φ(q): compared with document vectors. */
  questionForDocuments?: Float32Array;
  /** E_Q^ψ(q): compared with passage vectors. */
  questionForPassages?: Float32Array;
  /** The question's text, for LEXICAL and HYBRID. */
  questionText?: string;
  k1: number;
  k2: number;
  lambda: number;
  filter?: RetrievalFilter;
  /** No ANN index: exact inner products by sequential scan (the DPR paper's setting for FLAT). */
  exact?: boolean;
  /** HNSW candidate list size: at least this, and at least efFactor × the rows a stage returns. */
  efSearch?: number;
  /** HNSW ef_search per row a stage returns (DEFAULT_EF_FACTOR). */
  efFactor?: number;
  /**
   * How an HNSW scan goes on when filtered rows leave it short (pgvector iterative scans):
   * strict_order (default) returns rows in exact distance order; relaxed_order may return them
   * slightly out of order, faster. Results are re-sorted by score either way.
   */
  iterativeScan?: IterativeScan;
  /** The most tuples an iterative scan visits (pgvector's hnsw.max_scan_tuples, default 20,000). */
  maxScanTuples?: number;
}

export const ITERATIVE_SCANS = ['strict_order', 'relaxed_order'] as const;
export type IterativeScan = (typeof ITERATIVE_SCANS)[number];
/** pgvector's own default for hnsw.max_scan_tuples, sent explicitly so every search sets it. */
export const DEFAULT_MAX_SCAN_TUPLES = 20_000;

export interface ScoredPassageRow {
  passageId: number;
  documentId: number;
  /** What the ranking sorts by: passageScore + λ·documentScore (DHR), or the mode's own score. */
  score: number;
  passageScore: number | null;
  documentScore: number | null;
}

export interface ScoredDocumentRow {
  documentId: number;
  score: number;
}

export interface SearchResult {
  passages: ScoredPassageRow[];
  documents: ScoredDocumentRow[];
}

/** Reciprocal rank fusion constant (Cormack et al. 2009) for HYBRID. */
export const RRF_K = 60;
export const DEFAULT_EF_SEARCH = 100;
/**
 * ef_search = 3 × the rows a stage returns. bench:retrieve at 1M (docs/benchmarks.md), stage 1
 * with k1 = 100, four machines: recall@20 against the exact DHR ranking 0.92–0.96 at ef 1·k1,
 * 0.98–1.00 at 2·k1, 0.99–1.00 at 3·k1 and the same at 4·k1, which was 0.8–3 ms slower.
 */
export const DEFAULT_EF_FACTOR = 3;
