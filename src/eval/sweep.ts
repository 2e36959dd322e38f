/**
 * λ selection as DHR §5.3 does it: a grid over [0, 2] with step 0.1 on the dev split, then step
 * 0.01 in [λ₁ − 0.05, λ₁ + 0.05], maximising Top-20 accuracy. Ties go to the higher MRR@20, then
 * to the λ nearest 1 (plain score addition, the paper's robust default), then to the smaller λ.
 */
export interface LambdaPoint {
  lambda: number;
  phase: 'coarse' | 'fine';
  top20: number;
  mrr20: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function coarseGrid(): number[] {
  return Array.from({ length: 21 }, (_, i) => round2(i * 0.1));
}

export function fineGrid(center: number): number[] {
  const out: number[] = [];
  for (let i = -5; i <= 5; i++) {
    const lambda = round2(center + i * 0.01);
    if (lambda >= 0 && lambda <= 2) out.push(lambda);
  }
  return out;
}

/** The best point by Top-20, then MRR@20, then nearness to 1, then the smaller λ. */
export function bestLambda(points: readonly LambdaPoint[]): LambdaPoint {
  if (points.length === 0) throw new Error('no λ points');
  return [...points].sort((a, b) => b.top20 - a.top20 || b.mrr20 - a.mrr20 || Math.abs(a.lambda - 1) - Math.abs(b.lambda - 1) || a.lambda - b.lambda)[0];
}
