/**
 * Result cut-offs on the final score: `minScore`, and `autocut`, which ends the
 * results at the first large jump in score, as Weaviate's autocut does. Hand-written: no
 * maintained npm library does this; the algorithm follows Weaviate's
 * (weaviate/weaviate entities/autocut/autocut.go).
 */

/**
 * How many of these scores (best first) to keep: the scores are normalized to [0, 1] from the
 * first to the last, compared with a straight line from the first to the last, and the list ends
 * before the `jumps`-th local maximum of (normalized score − line), which is where the scores fell
 * faster than evenly. Equal scores (no jump anywhere) keep everything.
 */
export function autocut(scores: readonly number[], jumps: number): number {
  const n = scores.length;
  if (n <= 1) return n;
  const first = scores[0];
  const span = scores[n - 1] - first;
  if (span === 0) return n;
  const diff = scores.map((s, i) => (s - first) / span - i / (n - 1));
  let found = 0;
  for (let i = 1; i < n; i++) {
    const peak = i === n - 1 ? n >= 3 && diff[i] > diff[i - 1] && diff[i] > diff[i - 2] : diff[i] > diff[i - 1] && diff[i] > diff[i + 1];
    if (peak && ++found >= jumps) return i;
  }
  return n;
}

export interface Cutoffs {
  /** Keep results whose final score is at least this. */
  minScore?: number;
  /** End the results before the autocut-th jump in score. */
  autocut?: number;
}

/** The leading results to keep (best first), minScore applied before autocut. */
export function applyCutoffs<T extends { score: number }>(ranked: readonly T[], cutoffs: Cutoffs): T[] {
  let kept = cutoffs.minScore === undefined ? [...ranked] : ranked.filter((r) => r.score >= cutoffs.minScore!);
  if (cutoffs.autocut !== undefined)
    kept = kept.slice(
      0,
      autocut(
        kept.map((r) => r.score),
        cutoffs.autocut,
      ),
    );
  return kept;
}
