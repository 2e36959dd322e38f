import type { DocumentRow, PassageRow } from '../store/rows';
import type { Ranking } from './parameters';

export { DOCUMENT_PASSAGES, type DocumentPassages } from './parameters';

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

/** Okapi BM25's parameters, and how documents weigh their summary against their full text (BM25F). */
export interface Bm25Settings {
  /** Term-frequency saturation (BM25's k1, not DHR's k1). */
  k1: number;
  /** Length normalization. */
  b: number;
  /** A summary occurrence (title, abstract, table of contents) counts this many full-text ones. */
  summaryWeight: number;
  /**
   * Candidate postings read for the question's rarest term, best impact first; a commoner term's
   * share falls with its idf (exact search reads all).
   */
  termCap: number;
  /** Candidates (the best by partial score) scored exactly over every question term; at least 2 × the items asked for. */
  rescore: number;
  /**
   * termCap where BM25 only proposes candidates that are then scored exactly anyway
   * (HYBRID_HIERARCHICAL's document stage: its union with the dense candidates gets exact BM25F
   * afterwards), with the shallowest rescoring (2 × k1).
   */
  candidateCap: number;
  /**
   * Where the store has a BM25 index (PGlite): passage BM25 reads it when the question's posting
   * lists hold more than this many postings per candidate it would take from the index, the
   * postings otherwise (0: always the index). The index costs about its candidates, the postings
   * about their length (bench:peers).
   */
  indexWorth: number;
}

/**
 * Chosen on the dev splits of both public sets (docs/eval/README.md): k1 = 0.9, b = 0.6 against
 * the literature's 1.2 / 0.75 (MRR@20 summed over both dev splits 1.036 against 0.976; pydocs
 * alike, Factbook's short label passages want less saturation and length normalization). The
 * summary weight by document-stage recall@100, then MRR@20 (3: 92.9 / 100 against 90.5 / 100 at 1).
 * termCap and rescore: bench:bm25 at 1M passages; candidateCap: bench:hybrid at 1M; indexWorth: per
 * question on the Python docs, PGlite (docs/benchmarks.md).
 */
export const DEFAULT_BM25: Bm25Settings = { k1: 0.9, b: 0.6, summaryWeight: 3, termCap: 20_000, rescore: 1_000, candidateCap: 5_000, indexWorth: 50 };

/**
 * A search over stored vectors and postings: the question is already encoded (once per distinct
 * question model); what a mode does not use may be left out.
 */
export interface SearchInput extends Partial<Omit<Ranking, 'lambda' | 'perDocument'>>, SearchExecution {
  /** The model of document vectors (E_D^φ) and of passage vectors (E_P^ψ). */
  documentModel: ModelRef;
  passageModel: ModelRef;
  /** E_Q^φ(q): compared with document vectors. */
  questionForDocuments?: Float32Array;
  /** E_Q^ψ(q): compared with passage vectors. */
  questionForPassages?: Float32Array;
  /**
   * HYBRID_HIERARCHICAL with titleLinkDense: E_Q^ψ of the question without the names it holds
   * (question-names.ts), compared with stage 2's passages instead of questionForPassages when
   * stage 1 confirms a named document.
   */
  questionForAttribute?: Float32Array;
  /** The question's text, for the BM25 parts. */
  questionText?: string;
  k1: number;
  k2: number;
  /** The ranking parameters (parameters.ts), resolved by the caller; one left out takes its built-in value. */
  lambda: number;
  /** At most this many passages of one document among the ranked passages (unset: no bound). */
  perDocument?: number;
  /**
   * Passages left out of the ranked ones before the bound per document, its decay and k2, as if they
   * were not there (a tune's cloze question leaves out its own passage: tuning/score.ts). Not a
   * client's argument.
   */
  withoutPassages?: readonly number[];
  filter?: RetrievalFilter;
  /**
   * The store is a Citus coordinator (set by search from the database, never by callers): statements
   * take the forms Citus pushes down to every shard (docs/scale-out.md).
   */
  distributed?: boolean;
  /**
   * The store has the BM25 index (store/bm25-index.ts), set by search from the database; false from
   * a caller reads the postings even where it has one (their bounded path's tests, a bench's baseline).
   */
  bm25Index?: boolean;
  /**
   * The corpus's mean passages a document (store/corpus-shape.ts), set by search for
   * HYBRID_HIERARCHICAL: where k1 of them cannot exceed stage2.exhaustiveUpTo, its statement has no
   * candidate branch. Unset: the branch is built and the statement decides.
   */
  meanPassages?: number;
}

/**
 * How a search runs, not what it ranks by: exact or approximate, the HNSW and BM25 settings.
 * One part of both SearchInput (the statement's input) and RetrieveOptions (the server's), so the
 * two declare them once.
 */
/**
 * How HYBRID_HIERARCHICAL's stage 2 chooses what to score (statements/hybrid.ts stage2Scored):
 * every passage of its documents up to `exhaustiveUpTo` passages, or while they are under `share`
 * of the corpus; above both, the union of their max(depth × k2, candidates) best by vector and as
 * many by BM25. The exact form always scores every passage.
 */
export interface Stage2Settings {
  exhaustiveUpTo: number;
  share: number;
  candidates: number;
  depth: number;
}

/** bench:peers on the Python docs: recall@20 0.982 against the exhaustive form (100 a side: 0.977), at 0.84× its p50 (docs/benchmarks.md). */
export const DEFAULT_STAGE2: Stage2Settings = { exhaustiveUpTo: 2_000, share: 0.05, candidates: 200, depth: 10 };

export interface SearchExecution {
  bm25?: Partial<Bm25Settings>;
  stage2?: Partial<Stage2Settings>;
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
  /** The parts: the passage's inner product and BM25, its document's inner product and BM25F. */
  denseScore: number | null;
  lexicalScore: number | null;
  documentDenseScore: number | null;
  documentLexicalScore: number | null;
}

export interface ScoredDocumentRow {
  documentId: number;
  score: number;
  denseScore: number | null;
  lexicalScore: number | null;
}

export interface SearchResult {
  passages: ScoredPassageRow[];
  documents: ScoredDocumentRow[];
  /** How many distinct lexemes the question has for BM25 (null for modes that read none). */
  questionTerms: number | null;
  /** The ranked passages' requested columns (VectorSearch.rows), in no particular order. */
  passageRows?: Partial<PassageRow>[];
  /** The ranked documents' (and, if asked, the ranked passages' documents') requested columns. */
  documentRows?: Partial<DocumentRow>[];
}

export const DEFAULT_EF_SEARCH = 100;
/**
 * ef_search = 3 × the rows a stage returns. bench:retrieve at 1M (docs/benchmarks.md), stage 1
 * with k1 = 100, four machines: recall@20 against the exact DHR ranking 0.92–0.96 at ef 1·k1,
 * 0.98–1.00 at 2·k1, 0.99–1.00 at 3·k1 and the same at 4·k1, which was 0.8–3 ms slower.
 */
export const DEFAULT_EF_FACTOR = 3;
