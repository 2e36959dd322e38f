import { planRuns, runCost, RUN_OVERHEAD_SLOTS } from './batches';

/** Every way to cut n sorted rows into consecutive runs of at most maxRows (brute force). */
function allPlans(n: number, maxRows: number): number[][] {
  if (n === 0) return [[]];
  const out: number[][] = [];
  for (let first = 1; first <= Math.min(n, maxRows); first++) for (const rest of allPlans(n - first, maxRows)) out.push([first, ...rest]);
  return out;
}

function cost(lengths: number[], sizes: number[]): number {
  let total = 0;
  let start = 0;
  for (const size of sizes) {
    total += runCost(size, lengths[start + size - 1]);
    start += size;
  }
  return total;
}

describe('planRuns', () => {
  it('finds the least-cost cut of sorted lengths (checked against every cut)', () => {
    let seed = 11;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let trial = 0; trial < 60; trial++) {
      const n = 1 + Math.floor(next() * 9);
      const maxRows = 1 + Math.floor(next() * 5);
      const lengths = Array.from({ length: n }, () => 1 + Math.floor(next() ** 2 * 128)).sort((a, b) => a - b);
      const plan = planRuns(lengths, maxRows);
      expect(plan.reduce((a, b) => a + b, 0)).toBe(n);
      expect(Math.max(...plan)).toBeLessThanOrEqual(maxRows);
      const best = Math.min(...allPlans(n, maxRows).map((p) => cost(lengths, p)));
      expect(cost(lengths, plan)).toBeCloseTo(best, 9);
    }
  });

  it('keeps equal lengths in full runs and splits off a long outlier', () => {
    expect(planRuns(Array(40).fill(20), 16)).toHaveLength(3); // as few runs as maxRows allows
    expect(planRuns(Array(32).fill(20), 16)).toEqual([16, 16]);
    // Nine short sentences and one of 120 tokens: padding the nine to 120 costs more than a run.
    const plan = planRuns([...Array(9).fill(8), 120], 64);
    expect(plan).toEqual([9, 1]);
    expect(cost([...Array(9).fill(8), 120], plan)).toBeLessThan(runCost(10, 120));
  });

  it('plans nothing for no texts and one run for one', () => {
    expect(planRuns([], 16)).toEqual([]);
    expect(planRuns([5], 16)).toEqual([1]);
    expect(runCost(0, 0)).toBe(RUN_OVERHEAD_SLOTS);
  });
});
