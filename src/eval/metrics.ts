/**
 * Retrieval metrics as the DPR and DHR papers report them: Top-k accuracy (a hit among the first
 * k results), MRR@k, and DPR's answer matching (normalised answer string inside the passage).
 */

/** DPR-style normalisation: accents folded, lowercase, punctuation and articles dropped, spaces collapsed. */
export function normalizeAnswerText(s: string): string {
  return s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether any answer occurs in the text as whole words, after normalisation. */
export function hasAnswer(text: string, answers: readonly string[]): boolean {
  const haystack = ` ${normalizeAnswerText(text)} `;
  return answers.some((a) => {
    const needle = normalizeAnswerText(a);
    return needle !== '' && haystack.includes(` ${needle} `);
  });
}

/** 1-based rank of the first result that is a hit, or null when none is. */
export function firstHitRank<T>(results: readonly T[], isHit: (r: T) => boolean): number | null {
  const i = results.findIndex(isHit);
  return i < 0 ? null : i + 1;
}

/** Share of questions whose first hit is within the top k. */
export function hitAtK(ranks: readonly (number | null)[], k: number): number {
  if (ranks.length === 0) return 0;
  return ranks.filter((r) => r !== null && r <= k).length / ranks.length;
}

/** Mean reciprocal rank, counting only hits within the top k. */
export function mrrAtK(ranks: readonly (number | null)[], k: number): number {
  if (ranks.length === 0) return 0;
  return ranks.reduce<number>((sum, r) => sum + (r !== null && r <= k ? 1 / r : 0), 0) / ranks.length;
}

/** Percentile by nearest rank (p in [0, 100]) of unsorted values; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}
