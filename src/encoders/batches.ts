/**
 * How a call's texts are cut into model runs. Every row of a run is padded to the run's longest
 * row, and a transformer's cost grows with the padded size (attention with its square), so a run
 * that mixes a 6-token sentence with a 70-token one spends most of its work on padding. Texts are
 * sorted by length; this picks where to cut the sorted list so that the estimated cost, a fixed
 * price per run plus the padded token slots, is least (exact dynamic programme over cut points;
 * O(n · maxRows), a few microseconds for a retrieval's sentences). No library plans batches for
 * onnxruntime-node, which runs whatever tensor it is given.
 */

/** Cost of one run, in token slots: what a run costs beyond its rows (session call, thread wake-up). */
export const RUN_OVERHEAD_SLOTS = 24;
/** Padded length at which attention's square term doubles a slot's cost. */
export const ATTENTION_LENGTH = 128;

/** Estimated cost of one run of `rows` rows padded to `length` tokens, in token slots. */
export function runCost(rows: number, length: number): number {
  const L = Math.max(length, 1);
  return RUN_OVERHEAD_SLOTS + rows * L * (1 + L / ATTENTION_LENGTH);
}

/**
 * Splits lengths sorted ascending into consecutive runs of at most maxRows rows, least total
 * runCost. Returns the run sizes in order (they sum to lengths.length).
 */
export function planRuns(sortedLengths: readonly number[], maxRows: number): number[] {
  const n = sortedLengths.length;
  if (n === 0) return [];
  // best[i]: least cost of the first i rows; cut[i]: size of the last run in that plan.
  const best = new Float64Array(n + 1).fill(Infinity);
  const cut = new Int32Array(n + 1);
  best[0] = 0;
  for (let i = 1; i <= n; i++) {
    // The run ending at row i-1 is padded to its length (the list is sorted).
    const length = sortedLengths[i - 1];
    for (let size = 1; size <= Math.min(maxRows, i); size++) {
      const c = best[i - size] + runCost(size, length);
      if (c < best[i]) {
        best[i] = c;
        cut[i] = size;
      }
    }
  }
  const sizes: number[] = [];
  for (let i = n; i > 0; i -= cut[i]) sizes.push(cut[i]);
  return sizes.reverse();
}
