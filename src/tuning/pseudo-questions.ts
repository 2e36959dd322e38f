import { splitSentences } from '../retrieval/answer';
import { clozeSources } from '../store/cloze';
import type { Database } from '../store/db';
import { planPairs } from '../training/mine';
import type { PassageKey } from '../training/negatives';
import { PAIR_KINDS, type PairKind } from '../training/pair';
import { pairRandom } from '../training/random';
import { candidates } from '../training/sources';

/**
 * Questions a corpus asks of itself, to choose its retrieval settings without
 * labels: the pairs `dhr pairs` mines (HLP's dual-link and co-mention, section path, document
 * title; judged feedback when there is some) and inverse-cloze questions.
 *
 * Inverse cloze: a sentence of a passage is the question. That sentence still sits in the index,
 * so its own passage would be found by its exact words and would reward BM25 alone; its passage is
 * therefore left out of the ranking and the gold is the passage's neighbours (the other passages of
 * its section, or of its abstract), which share its topic but not the sentence. Every corpus with
 * sections of two passages or more gets them, links or informative headings or not.
 */
export type PseudoKind = PairKind | 'cloze';
/**
 * Pseudo-questions of each kind a tune draws: its default and the range `dhr tune`, `dhr tune
 * --url` and tuneRetrievalSettings accept (a grid point scores every question, so the bound is
 * the tune's running time: about 37 points × 5 kinds × this many searches).
 */
export const QUESTIONS_PER_KIND = { default: 40, min: 1, max: 1000 } as const;

export const PSEUDO_KINDS: readonly PseudoKind[] = [...PAIR_KINDS, 'cloze'];

export interface PseudoQuestion {
  kind: PseudoKind;
  question: string;
  /** Passages left out of the ranking before it is judged (the question's own passage). */
  excluded: number[];
  /** Whether a ranked passage answers the question. */
  answers(p: PassageKey): boolean;
}

export interface PseudoOptions {
  /** The most questions of each kind (drawn at random over the corpus, not the first ones). */
  perKind: number;
  seed: number;
  kinds?: readonly PseudoKind[];
}

/** Words a cloze sentence needs to be a question (shorter ones are headings or list items). */
const MIN_CLOZE_WORDS = 6;
const MAX_QUESTION_WORDS = 64;

export async function pseudoQuestions(db: Database, o: PseudoOptions): Promise<{ questions: PseudoQuestion[]; counts: Record<PseudoKind, number> }> {
  const kinds = o.kinds ?? PSEUDO_KINDS;
  const questions: PseudoQuestion[] = [];
  const counts = Object.fromEntries(PSEUDO_KINDS.map((k) => [k, 0])) as Record<PseudoKind, number>;
  const pairKinds = PAIR_KINDS.filter((k) => kinds.includes(k));
  if (pairKinds.length > 0) {
    const { planned, hubThreshold } = await planPairs(db, { kinds: pairKinds, minPairs: 0 });
    for (const kind of pairKinds) {
      // Selection sampling (Knuth's Algorithm S): each candidate kept with probability
      // still needed / still to come, so exactly min(perKind, available) spread over the corpus
      // (candidates come in key order); seeded per candidate, so a run is reproducible.
      let seen = 0;
      for await (const c of candidates(db, kind, { seed: o.seed, pageSize: 500, maxQuestionWords: MAX_QUESTION_WORDS, hubThreshold })) {
        const needed = o.perKind - counts[kind];
        if (needed <= 0) break;
        const toCome = Math.max(1, planned[kind] - seen);
        if (pairRandom(o.seed, 'tune', kind, seen++)() >= needed / toCome) continue;
        questions.push({ kind, question: c.question, excluded: c.questionPassageId === null ? [] : [c.questionPassageId], answers: c.answers });
        counts[kind] += 1;
      }
    }
  }
  if (kinds.includes('cloze')) {
    for (const source of await clozeSources(db, o.perKind, o.seed)) {
      const sentences = splitSentences(source.text).filter((s) => s.text.split(/\s+/).length >= MIN_CLOZE_WORDS);
      if (sentences.length === 0) continue;
      const pick = sentences[Math.floor(pairRandom(o.seed, 'cloze', source.passageId)() * sentences.length)];
      const gold = new Set(source.neighbourIds);
      questions.push({
        kind: 'cloze',
        question: pick.text.split(/\s+/).slice(0, MAX_QUESTION_WORDS).join(' '),
        excluded: [source.passageId],
        answers: (p) => gold.has(p.passageId),
      });
      counts.cloze += 1;
    }
  }
  return { questions, counts };
}
