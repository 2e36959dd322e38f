/**
 * The training-pair contract: one `TrainingPair` per line of `dhr pairs` JSONL
 * (`JSON.stringify(pair)`), also what the `trainingPairs` query returns and what `dhr adapt`
 * reads. It lives in the adapters' layer, the lowest that uses it, so the miner (src/training,
 * above) and the trainer share one definition. Field names do not change; docs/training.md
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
  /**
   * judged: passages people judged not relevant to this question (feedback pairs only; empty for
   * mined kinds, and absent in files written before it existed).
   */
  negatives: { bm25: PairPassage[]; inDoc: PairPassage[]; inSec: PairPassage[]; documents: PairDocument[]; judged?: PairPassage[] };
}

export const isPairKind = (value: string): value is PairKind => (PAIR_KINDS as readonly string[]).includes(value);
