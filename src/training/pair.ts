/** The pair contract (src/adapters/pair.ts) and what the miner adds to it. */
import type { PairKind } from '../adapters/pair';
export { PAIR_KINDS, isPairKind, type PairDocument, type PairKind, type PairPassage, type TrainingPair } from '../adapters/pair';

/** How many negatives of each kind a pair gets. */
export interface NegativeCounts {
  bm25: number;
  inDoc: number;
  inSec: number;
  documents: number;
}

export const DEFAULT_NEGATIVES: NegativeCounts = { bm25: 4, inDoc: 4, inSec: 4, documents: 4 };

/** The most pairs one trainingPairs request returns: a sample over the API; `dhr pairs` streams all of them. */
export const MAX_TRAINING_PAIRS = 100;

/** A kind's GraphQL enum name (dual-link → DUAL_LINK): the API's TrainingPairKind and `dhr pairs --url` spell the kinds with it. */
export const pairKindName = (kind: PairKind): string => kind.replace(/-/g, '_').toUpperCase();
