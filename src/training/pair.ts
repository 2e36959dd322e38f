/**
 * The training-pair contract: one `TrainingPair` per line of `dhr pairs` JSONL
 * (`JSON.stringify(pair)`), also what the `trainingPairs` query returns. Other tools (the
 * query-side adapter's trainer) read this shape: field names do not change. docs/training.md
 * documents each field and kind.
 */
export type PairKind = 'dual-link' | 'co-mention' | 'section-path' | 'document-title' | 'feedback';

/** Every kind, in the order a run mines them. */
export const PAIR_KINDS: readonly PairKind[] = ['dual-link', 'co-mention', 'section-path', 'document-title', 'feedback'];

export interface PairPassage {
  passageId: number;
  documentId: number;
  sectionId: number | null;
  titlePath: string[];
  text: string;
}

export interface PairDocument {
  documentId: number;
  title: string;
}

export interface TrainingPair {
  kind: PairKind;
  /**
   * The pseudo question: for dual-link/co-mention passage A's text (clipped to the maximum question
   * words); section-path the section's title path joined with ' › '; document-title the document's
   * title; feedback the judged question.
   */
  question: string;
  /** Passage A for link pairs (so training can exclude it), else null. */
  questionPassageId: number | null;
  positive: PairPassage;
  positiveDocument: PairDocument;
  negatives: { bm25: PairPassage[]; inDoc: PairPassage[]; inSec: PairPassage[]; documents: PairDocument[] };
}

/** How many negatives of each kind a pair gets. */
export interface NegativeCounts {
  bm25: number;
  inDoc: number;
  inSec: number;
  documents: number;
}

export const DEFAULT_NEGATIVES: NegativeCounts = { bm25: 4, inDoc: 4, inSec: 4, documents: 4 };

export const isPairKind = (value: string): value is PairKind => (PAIR_KINDS as readonly string[]).includes(value);
