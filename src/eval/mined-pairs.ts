/**
 * Mined pairs for the eval's "mined" adapter, sampled across the corpus. `minePairs` with a limit
 * keeps the first pairs in key order (the first documents ingested); here each kind's candidates
 * are scanned (up to a bound) and a seeded reservoir keeps a uniform sample, then the sample gets
 * the miner's own negatives. Same sources, same negatives, same per-pair randomness as `minePairs`.
 */
import type { PairKind, TrainingPair } from '../adapters/pair';
import { hubThreshold } from '../store/pairs';
import type { Database } from '../store/db';
import { DEFAULT_HUB_FRACTION, DEFAULT_MAX_QUESTION_WORDS } from '../training/mine';
import { withNegatives, type PairCandidate } from '../training/negatives';
import { DEFAULT_NEGATIVES } from '../training/pair';
import { pairRandom } from '../training/random';
import { candidates } from '../training/sources';

export interface MinedSample {
  pairs: TrainingPair[];
  /** Candidates read per kind (at most the scan bound), of which `perKind` at most were kept. */
  scanned: Partial<Record<PairKind, number>>;
}

export async function sampleMinedPairs(
  db: Database,
  kinds: readonly PairKind[],
  options: { perKind: number; scanPerKind: number; seed: number },
): Promise<MinedSample> {
  const hub = kinds.includes('co-mention') ? await hubThreshold(db, DEFAULT_HUB_FRACTION) : null;
  const source = { seed: options.seed, pageSize: 500, maxQuestionWords: DEFAULT_MAX_QUESTION_WORDS, hubThreshold: hub };
  const pairs: TrainingPair[] = [];
  const scanned: MinedSample['scanned'] = {};
  for (const kind of kinds) {
    // Algorithm R: after n candidates each has been kept with probability perKind / n.
    const random = pairRandom(options.seed, 'eval-sample', kind);
    const kept: Array<{ at: number; c: PairCandidate }> = [];
    let n = 0;
    for await (const c of candidates(db, kind, source)) {
      if (n >= options.scanPerKind) break;
      if (kept.length < options.perKind) kept.push({ at: n, c });
      else {
        const j = Math.floor(random() * (n + 1));
        if (j < options.perKind) kept[j] = { at: n, c };
      }
      n += 1;
    }
    scanned[kind] = n;
    // Key order again, so the pairs' order does not depend on the reservoir's swaps.
    kept.sort((a, b) => a.at - b.at);
    for (const { c } of kept) {
      const pair = await withNegatives(db, c, DEFAULT_NEGATIVES, pairRandom(options.seed, kind, c.questionPassageId ?? c.question, c.positiveId));
      if (pair) pairs.push(pair);
    }
  }
  return { pairs, scanned };
}
