import { DomainError, ErrorCode } from '../errors';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import { countRelevantFeedback } from '../store/feedback';
import { countGroups, countLinkPairs, hubThreshold } from '../store/pairs';
import { withNegatives } from './negatives';
import { DEFAULT_NEGATIVES, PAIR_KINDS, type NegativeCounts, type PairKind, type TrainingPair } from './pair';
import { pairRandom } from './random';
import { candidates } from './sources';

export interface MineOptions {
  /** The kinds to mine, each in turn (default: all, in PAIR_KINDS order). */
  kinds?: readonly PairKind[];
  /** The most pairs of each kind (default: all). */
  limit?: number;
  negatives?: Partial<NegativeCounts>;
  /** Drives every random draw (default 0): the same seed and store give the same pairs, byte for byte. */
  seed?: number;
  /** Link pairs: passage A is clipped to this many words as the question (default 64). */
  maxQuestionWords?: number;
  /** Co-mention: the share of most-linked documents that are hubs, never a co-mentioned third (HLP: 0.1). */
  hubFraction?: number;
  /** Fewer pairs than this is an error, raised before the first pair (default 1). */
  minPairs?: number;
  /** Rows per page of candidates (default 100). */
  pageSize?: number;
  bm25?: Partial<Bm25Settings>;
  /** Called once, before the first pair, with how many pairs of each kind will come. */
  onPlan?: (planned: Record<PairKind, number>) => void;
}

export const DEFAULT_MAX_QUESTION_WORDS = 64;
export const DEFAULT_HUB_FRACTION = 0.1;

/** Why a kind gave no pairs, in words for the error. */
const EMPTY_BECAUSE: Record<PairKind, (resolvedLinks: number) => string> = {
  'dual-link': (n) => `dual-link: no two passages of different documents link to each other's documents (${n} resolved links between documents)`,
  'co-mention': (n) =>
    `co-mention: no passage links to a third document (other than a hub) that a passage of another document linking back also links to (${n} resolved links between documents)`,
  'section-path': () => 'section-path: no section has a passage',
  'document-title': () => 'document-title: no document has abstract passages (text before its first heading)',
  feedback: () => 'feedback: no question has a passage judged relevant',
};

/** How many pairs of each kind a run with these options yields, and the co-mention hub threshold. */
export async function planPairs(db: Database, options: MineOptions = {}): Promise<{ planned: Record<PairKind, number>; hubThreshold: number | null }> {
  const kinds = options.kinds ?? PAIR_KINDS;
  const hub = kinds.includes('co-mention') ? await hubThreshold(db, options.hubFraction ?? DEFAULT_HUB_FRACTION) : null;
  const links = kinds.includes('dual-link') || kinds.includes('co-mention') ? await countLinkPairs(db, hub, options.limit ?? null) : undefined;
  const groups = kinds.includes('section-path') || kinds.includes('document-title') ? await countGroups(db) : undefined;
  const available: Record<PairKind, number> = {
    'dual-link': links?.dualLink ?? 0,
    'co-mention': links?.coMention ?? 0,
    'section-path': groups?.sections ?? 0,
    'document-title': groups?.abstracts ?? 0,
    feedback: kinds.includes('feedback') ? await countRelevantFeedback(db) : 0,
  };
  const planned = Object.fromEntries(PAIR_KINDS.map((k) => [k, kinds.includes(k) ? Math.min(available[k], options.limit ?? Infinity) : 0])) as Record<
    PairKind,
    number
  >;
  const total = kinds.reduce((sum, k) => sum + planned[k], 0);
  const minimum = options.minPairs ?? 1;
  if (total < minimum) {
    const empty = kinds.filter((k) => planned[k] === 0).map((k) => EMPTY_BECAUSE[k](links?.resolvedLinks ?? 0));
    throw new DomainError(
      ErrorCode.BAD_USER_INPUT,
      `too few training pairs: ${total} of kinds ${kinds.join(', ')}, at least ${minimum} needed` + (empty.length ? `; ${empty.join('; ')}` : ''),
      { argument: 'kinds', details: { planned, minimum } },
    );
  }
  return { planned, hubThreshold: hub };
}

/**
 * Training pairs mined from the stored corpus, kind after kind, each with its negatives. Streams:
 * candidates are read a page at a time in key order and each pair's negatives are read when the
 * pair is, so memory holds one page and one document's passage keys whatever the corpus size.
 * Throws (before the first pair) when fewer than `minPairs` pairs can be mined, naming why.
 */
export async function* minePairs(db: Database, options: MineOptions = {}): AsyncGenerator<TrainingPair> {
  const kinds = options.kinds ?? PAIR_KINDS;
  const seed = options.seed ?? 0;
  const counts: NegativeCounts = { ...DEFAULT_NEGATIVES, ...options.negatives };
  const { planned, hubThreshold } = await planPairs(db, options);
  options.onPlan?.(planned);
  const sourceOptions = {
    seed,
    pageSize: options.pageSize ?? 100,
    maxQuestionWords: options.maxQuestionWords ?? DEFAULT_MAX_QUESTION_WORDS,
    hubThreshold,
  };
  for (const kind of PAIR_KINDS.filter((k) => kinds.includes(k))) {
    let emitted = 0;
    if (planned[kind] === 0) continue;
    for await (const candidate of candidates(db, kind, sourceOptions)) {
      const random = pairRandom(seed, kind, candidate.questionPassageId ?? candidate.question, candidate.positiveId);
      const pair = await withNegatives(db, candidate, counts, random, options.bm25);
      if (!pair) continue;
      yield pair;
      emitted += 1;
      if (emitted >= planned[kind]) break;
    }
  }
}

/** The pairs of judged feedback alone (questions people asked, passages they judged relevant). */
export function feedbackPairs(db: Database, options: Omit<MineOptions, 'kinds'> = {}): AsyncGenerator<TrainingPair> {
  return minePairs(db, { ...options, kinds: ['feedback'] });
}
