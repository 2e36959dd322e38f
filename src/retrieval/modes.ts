import { documents, flat, hierarchical, parallel } from './statements/dense';
import { hybridFlat, hybridHierarchical } from './statements/hybrid';
import { lexical, lexicalDocuments } from './statements/lexical';
import { RANKING, type RankingLayer } from './parameters';
import type { Params } from './statements/params';
import type { ModeStatement } from './statements/parts';
import type { SearchInput } from './types';

/** What a mode reads besides stored rows. */
export interface ModeNeeds {
  /** E_Q^φ(q), compared with document vectors. */
  documentVector: boolean;
  /** E_Q^ψ(q), compared with passage vectors. */
  passageVector: boolean;
  /** The question's text (BM25). */
  text: boolean;
}

export interface ModeSpec {
  /** One line: the GraphQL enum's description, the docs' mode table, the eval's legend. */
  description: string;
  needs: ModeNeeds;
  /** Whether λ changes the ranking (the eval tunes λ for these). */
  usesLambda: boolean;
  /** Whether alpha (dense vs BM25 weight) changes the ranking. */
  usesAlpha: boolean;
  /** Whether `documents` holds a document stage (judged by document-stage recall in the eval). */
  documentStage: boolean;
  /** Ranks documents only: `passages` is always empty. */
  documentsOnly: boolean;
  /**
   * The ranking parameters when no request, corpus setting or environment gives them (the last
   * layer of resolveRanking): chosen on the dev splits of the public sets (docs/eval). What a mode
   * leaves out is the parameter's built-in value (parameters.ts), as for λ = 1 in the DHR modes.
   */
  defaults: RankingLayer;
  /** One SQL statement. */
  build(s: SearchInput, p: Params, exact: boolean): ModeStatement;
}

const DENSE: ModeNeeds = { documentVector: true, passageVector: true, text: false };

/**
 * The retrieval modes, one entry each. The GraphQL enum, validation, the eval's mode list and the
 * docs' mode table are derived from this table (test/modes.test.ts checks that they agree).
 */
export const MODES = {
  HYBRID_HIERARCHICAL: {
    description:
      'Hybrid DHR (default): documents by their summary vectors (the summary and its pieces, best of them) fused with document BM25F, a document the question names promoted; then their passages by passage vector fused with passage BM25 (weight alpha), both looking past the named document’s name (its words out of BM25’s question, a question vector without them mixed in); score = passage + λ·document.',
    needs: { documentVector: true, passageVector: true, text: true },
    usesLambda: true,
    usesAlpha: true,
    documentStage: true,
    documentsOnly: false,
    // dev splits of both sets: the document stage (summaryShare, documentAlpha, summaryPieces) by
    // document-stage recall@20/100, then alpha and λ by the worst margin over BM25, then the summed
    // gain over it (scripts/choose-defaults.ts). No passage budget: none is free of loss on both dev
    // splits (the Python docs lose recall@100 under every one tried); a corpus sets its own (the demo's, chosen by dhr tune, is 8,100).
    // perDocumentDecay 0.01: the largest that loses neither dev split a question at Top-1/5/20/100
    // (the Python docs gain 2.3 points at Top-5 and 4.8 at Top-20; docs/eval/README.md).
    // titleLink 1 (title linking, confirmed within stage 1's top titleLinkRank 3) with alpha 0.5: the
    // best worst margin over LEXICAL at Top-1/5/20 across the dev splits of the four sets (pydocs,
    // pyapi, factbook, factbook-attributes; `dhr eval --points`, docs/eval/README.md "Current figures"):
    // with the link, stage 2 chooses among one document's passages, where the dense side decides
    // what BM25 cannot (a fact asked in words its section's title does not use).
    // titleLinkDense 0.5 (stage 2's dense side half the question without the names it holds): the
    // same worst margin over LEXICAL on those dev splits (+0.9, the capitals at Top-20) and the larger
    // summed gain (factbook-attributes +1.7 / +2.5 / +2.5; pyapi −1.3 / +0.4 / +0.5; the other two
    // unchanged); 1 (the name-free question alone) lost factbook-attributes 2.5 points at Top-1.
    defaults: { lambda: 0.5, alpha: 0.5, documentAlpha: 0.6, summaryShare: 1, summaryPieces: true, perDocumentDecay: 0.01, titleLink: 1, titleLinkDense: 0.5 },
    build: hybridHierarchical,
  },
  HIERARCHICAL: {
    description: 'DHR serial: the top-k1 documents by summary vector (HNSW), then all their passages scored exactly; score = passage + λ·document.',
    needs: DENSE,
    usesLambda: true,
    usesAlpha: false,
    documentStage: true,
    documentsOnly: false,
    defaults: {},
    build: hierarchical,
  },
  PARALLEL: {
    description: 'DHR para-rerank: the top max(k1, k2) passages by vector over the corpus, each fused with its document’s score.',
    needs: DENSE,
    usesLambda: true,
    usesAlpha: false,
    documentStage: false,
    documentsOnly: false,
    defaults: {},
    build: parallel,
  },
  FLAT: {
    description: 'DPR baseline: the top k2 passages by vector over the corpus, no document score.',
    needs: { documentVector: false, passageVector: true, text: false },
    usesLambda: false,
    usesAlpha: false,
    documentStage: false,
    documentsOnly: false,
    defaults: {},
    build: flat,
  },
  DOCUMENTS: {
    description: 'DHR-D alone: the top-k1 documents by summary vector; passages empty.',
    needs: { documentVector: true, passageVector: false, text: false },
    usesLambda: false,
    usesAlpha: false,
    documentStage: true,
    documentsOnly: true,
    defaults: {},
    build: documents,
  },
  LEXICAL: {
    description: 'Okapi BM25 over each passage’s title path and text (English stemming); needs no encoder.',
    needs: { documentVector: false, passageVector: false, text: true },
    usesLambda: false,
    usesAlpha: false,
    documentStage: false,
    documentsOnly: false,
    defaults: {},
    build: lexical,
  },
  LEXICAL_DOCUMENTS: {
    description: 'Document BM25F over summary and full text: the top-k1 documents; passages empty; needs no encoder.',
    needs: { documentVector: false, passageVector: false, text: true },
    usesLambda: false,
    usesAlpha: false,
    documentStage: true,
    documentsOnly: true,
    defaults: {},
    build: lexicalDocuments,
  },
  HYBRID: {
    description: 'Flat hybrid: the union of the top max(k1, k2) passages by vector and by BM25, fused with weight alpha; no document stage.',
    needs: { documentVector: false, passageVector: true, text: true },
    usesLambda: false,
    usesAlpha: true,
    documentStage: false,
    documentsOnly: false,
    defaults: { alpha: 0.2 },
    build: hybridFlat,
  },
} satisfies Record<string, ModeSpec>;

export type RetrievalMode = keyof typeof MODES;
export const RETRIEVAL_MODES = Object.keys(MODES) as RetrievalMode[];

/** The mode a question gets when it names none (the best on both public sets: docs/eval). */
export const DEFAULT_MODE: RetrievalMode = 'HYBRID_HIERARCHICAL';
/** What the default falls back to on a server without encoders. */
export const TEXT_ONLY_MODE: RetrievalMode = 'LEXICAL';

export const needsVectors = (mode: RetrievalMode): boolean => MODES[mode].needs.documentVector || MODES[mode].needs.passageVector;

/** A mode's defaults with λ filled in from its built-in value (what a direct search() call needs). */
export const modeDefaults = <M extends RetrievalMode>(mode: M): { lambda: number } & (typeof MODES)[M]['defaults'] => ({
  lambda: RANKING.lambda.builtIn,
  ...MODES[mode].defaults,
});
