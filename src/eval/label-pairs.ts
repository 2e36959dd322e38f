/**
 * Dev-split questions as training pairs for the eval's "labels" adapter. Only questions the
 * caller passes are read (the eval passes the dev split), so no test question can reach training.
 */
import type { TrainingPair } from '../adapters/pair';
import { readStoredVectors } from '../store/training-vectors';
import { withNegatives } from '../training/negatives';
import { DEFAULT_NEGATIVES } from '../training/pair';
import { pairRandom } from '../training/random';
import { hasAnswer } from './metrics';
import type { Corpus } from './run';
import type { EvalQuestion } from './types';

/** How each labelled pair's positive passage was chosen. */
export interface LabelPositives {
  /** A passage of a gold document holding an answer string (the one the dense model scores highest). */
  answerString: number;
  /** No answer strings (or none found in a gold document): the gold documents' passage the dense model scores highest. */
  denseTop: number;
  /** Questions without a gold document in the corpus: no pair. */
  dropped: number;
}

const ENCODE_BATCH = 64;

/**
 * One pair per question: positive passage as `LabelPositives` says, positive document its gold
 * document; negatives as the miner draws them (BM25 top, In-Sec, In-Doc, BM25F documents), where
 * nothing that counts as a hit in the eval is a negative: no passage holding an answer string
 * (answer-judged sets), no passage or document of a gold document among the BM25 and document
 * negatives. Kind "feedback": a judged question, the nearest kind of the pair contract.
 */
export async function labelPairs(
  corpus: Corpus,
  questions: readonly EvalQuestion[],
  seed: number,
): Promise<{ pairs: TrainingPair[]; positives: LabelPositives }> {
  const idOfKey = new Map([...corpus.documentKeys].map(([id, key]) => [key, id]));
  const passagesOf = new Map<string, number[]>();
  for (const [id, p] of corpus.passages) {
    const list = passagesOf.get(p.documentKey);
    if (list) list.push(id);
    else passagesOf.set(p.documentKey, [id]);
  }
  const encoder = corpus.targets.encoders.byRole.questionPassage;
  const dim = Number(corpus.targets.passage.dimension);
  const positives: LabelPositives = { answerString: 0, denseTop: 0, dropped: 0 };
  const pairs: TrainingPair[] = [];
  for (let i = 0; i < questions.length; i += ENCODE_BATCH) {
    const batch = questions.slice(i, i + ENCODE_BATCH);
    const { vectors } = await encoder.encode(
      batch.map((q) => q.question),
      'questionPassage',
    );
    for (const [j, q] of batch.entries()) {
      const gold = new Set(q.goldDocuments.filter((k) => idOfKey.has(k)));
      const all = [...gold].flatMap((k) => passagesOf.get(k) ?? []);
      if (all.length === 0) {
        positives.dropped += 1;
        continue;
      }
      const holding = q.answers ? all.filter((id) => hasAnswer(corpus.passages.get(id)!.text, q.answers!)) : [];
      const pool = holding.length > 0 ? holding : all;
      positives[holding.length > 0 ? 'answerString' : 'denseTop'] += 1;
      const positiveId = await denseTop(corpus, pool, vectors[j], dim);
      const answers = q.answers;
      const pair = await withNegatives(
        corpus.db,
        {
          kind: 'feedback',
          question: q.question,
          questionPassageId: null,
          questionDocumentId: null,
          positiveId,
          answers: (p) => (answers ? hasAnswer(corpus.passages.get(p.passageId)?.text ?? '', answers) : false),
        },
        DEFAULT_NEGATIVES,
        pairRandom(seed, 'dev-label', q.id),
      );
      if (!pair) continue;
      // Other gold documents' passages and the gold documents themselves would be hits, not negatives.
      const goldIds = new Set([...gold].map((k) => idOfKey.get(k)!));
      pair.negatives.bm25 = pair.negatives.bm25.filter((p) => !goldIds.has(p.documentId));
      pair.negatives.documents = pair.negatives.documents.filter((d) => !goldIds.has(d.documentId));
      pairs.push(pair);
    }
  }
  return { pairs, positives };
}

/** The passage of `ids` with the highest inner product with the question vector (ties: the lower id). */
async function denseTop(corpus: Corpus, ids: number[], question: Float32Array, dim: number): Promise<number> {
  if (ids.length === 1) return ids[0];
  const vectors = new Float32Array(ids.length * dim);
  const missing = await readStoredVectors(corpus.db, 'passage', Number(corpus.targets.passage.id), ids, dim, vectors);
  let best = ids[0];
  let bestScore = -Infinity;
  ids.forEach((id, r) => {
    if (missing.has(id)) return;
    let s = 0;
    for (let c = 0; c < dim; c++) s += vectors[r * dim + c] * question[c];
    if (s > bestScore || (s === bestScore && id < best)) [best, bestScore] = [id, s];
  });
  return best;
}
