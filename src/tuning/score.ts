import type { RetrievalMode } from '../retrieval/modes';
import type { Ranking } from '../retrieval/parameters';
import { retrieve } from '../retrieval/retrieve';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import type { PassageKey } from '../training/negatives';
import type { PseudoKind, PseudoQuestion } from './pseudo-questions';

/** One point of a tune, run over every question. */
export interface PointScore {
  label: string;
  /** The mode and every ranking parameter this point ran with. */
  mode: RetrievalMode;
  values: Ranking;
  /** Mean reciprocal rank of the first gold passage in the top k2 (0 when none). */
  mrr: number;
  top1: number;
  top20: number;
  /** Questions whose gold is within the depth the point was run to (k2 unless a deeper one was asked). */
  recall: number;
  /** Per question, the reciprocal rank (for the paired comparison). */
  reciprocalRanks: number[];
  /** Per question, whether its gold is within the depth (what a passage budget must not lose). */
  found: boolean[];
  /** MRR per source of questions, to compare what each kind of pseudo-question says. */
  byKind: Partial<Record<PseudoKind, { questions: number; mrr: number }>>;
}

/**
 * Runs every question through `retrieve` as the server runs it and scores the first gold passage
 * of each: MRR@k2, Top-1, Top-20, and recall down to `depth` (default k2).
 */
export async function scorePoint(
  db: Database,
  targets: EmbeddingTargets,
  questions: readonly PseudoQuestion[],
  p: { label: string; mode: RetrievalMode; values: Ranking; k1: number; k2: number; depth?: number; bm25?: Partial<Bm25Settings> },
): Promise<PointScore> {
  const depth = Math.max(p.k2, p.depth ?? p.k2);
  const reciprocalRanks: number[] = [];
  const found: boolean[] = [];
  let top1 = 0;
  let top20 = 0;
  for (const q of questions) {
    const result = await retrieve(
      db,
      targets,
      // One more per passage left out: a flat mode's candidates are its top k2, taken before they go.
      { question: q.question, mode: p.mode, k1: p.k1, k2: Math.min(1000, depth + q.excluded.length), ...p.values },
      // Left out inside the statement, before the bound per document and its decay: filtered out of
      // the returned list instead, a cloze question's own passage kept its document's first place,
      // so the decay penalized and a bound of one dropped its section's other passages, the gold.
      { bm25: p.bm25, rows: { passages: ['id', 'documentId', 'sectionId', 'titlePath'] }, withoutPassages: q.excluded },
    );
    const keys = new Map((result.passageRows ?? []).map((r) => [r.id!, r as PassageKey & { id: number }]));
    const ranked = result.passages.slice(0, depth);
    const rank = ranked.findIndex((r) => {
      const key = keys.get(r.passageId);
      return key !== undefined && q.answers({ ...key, passageId: r.passageId });
    });
    reciprocalRanks.push(rank < 0 || rank >= p.k2 ? 0 : 1 / (rank + 1));
    if (rank === 0) top1 += 1;
    if (rank >= 0 && rank < 20) top20 += 1;
    found.push(rank >= 0);
  }
  const n = questions.length;
  const mrr = reciprocalRanks.reduce((a, b) => a + b, 0) / n;
  const byKind: PointScore['byKind'] = {};
  questions.forEach((q, i) => {
    const k = (byKind[q.kind] ??= { questions: 0, mrr: 0 });
    k.questions += 1;
    k.mrr += (reciprocalRanks[i] - k.mrr) / k.questions; // running mean
  });
  return {
    label: p.label,
    mode: p.mode,
    values: p.values,
    mrr,
    top1: top1 / n,
    top20: top20 / n,
    recall: found.filter(Boolean).length / n,
    reciprocalRanks,
    found,
    byKind,
  };
}
