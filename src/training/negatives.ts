import { search } from '../retrieval/search';
import type { VectorSearch } from '../retrieval/sql';
import type { Bm25Settings } from '../retrieval/types';
import type { Database } from '../store/db';
import { documentPassageKeys, documentTitles, pairPassages, type PairPassageRow } from '../store/pairs';
import type { NegativeCounts, PairDocument, PairKind, PairPassage, TrainingPair } from './pair';
import { sample } from './random';

/** A passage's place in the title tree: enough to tell whether it answers a question. */
export type PassageKey = Pick<PairPassage, 'passageId' | 'documentId' | 'sectionId' | 'titlePath'>;

/** A mined (question, positive) before its negatives are drawn. */
export interface PairCandidate {
  kind: PairKind;
  question: string;
  questionPassageId: number | null;
  /** The question passage's document (link kinds): not a document negative either. */
  questionDocumentId: number | null;
  positiveId: number;
  /**
   * Passages that answer the question as well as the positive does (the positive included): never
   * negatives, or training would push away a right answer.
   */
  answers(p: PassageKey): boolean;
  /** Feedback: passages judged not relevant to the question, the hardest negatives there are. */
  judgedNegativeIds?: number[];
}

/** BM25 reads at most this many passages per question while looking past excluded ones. */
const MAX_BM25_ROWS = 1000;

const lexicalSearch = (question: string, mode: 'LEXICAL' | 'LEXICAL_DOCUMENTS', k: number, bm25?: Partial<Bm25Settings>): VectorSearch => ({
  mode,
  // The lexical modes read no vectors, so their models are never looked at.
  documentModel: { id: 0, dimension: 1 },
  passageModel: { id: 0, dimension: 1 },
  questionText: question,
  k1: k,
  k2: k,
  lambda: 1,
  bm25,
});

const toPassage = (r: PairPassageRow): PairPassage => ({
  passageId: r.passageId,
  documentId: r.documentId,
  sectionId: r.sectionId,
  titlePath: r.titlePath,
  text: r.text,
});

/**
 * DHR's negatives for one pair (Section 3.4 there): the top BM25 passages for the question that
 * do not answer it; In-Sec, other passages of the positive's section, and In-Doc, other passages of
 * its document (outside the In-Sec draw), both sampled with `random`; and the top BM25F documents
 * other than the positive's (and the question's) for the document encoder; for feedback, the
 * passages judged not relevant to the same question (`judged`). Null when the positive
 * is gone (deleted since it was listed).
 */
export async function withNegatives(
  db: Database,
  c: PairCandidate,
  counts: NegativeCounts,
  random: () => number,
  bm25?: Partial<Bm25Settings>,
): Promise<TrainingPair | null> {
  const [positiveRow] = await pairPassages(db, [c.positiveId]);
  if (!positiveRow) return null;
  const positive = toPassage(positiveRow);
  const excluded = (p: PassageKey) => p.passageId === c.questionPassageId || p.passageId === positive.passageId || c.answers(p);

  const bm25Negatives: PairPassage[] = [];
  for (let k = counts.bm25 + 8; counts.bm25 > 0; k = Math.min(k * 4, MAX_BM25_ROWS)) {
    const hits = (await search(db, lexicalSearch(c.question, 'LEXICAL', k, bm25))).passages;
    const rows = (
      await pairPassages(
        db,
        hits.map((h) => h.passageId),
      )
    ).filter((r) => !excluded(r));
    bm25Negatives.splice(0, bm25Negatives.length, ...rows.slice(0, counts.bm25).map(toPassage));
    if (bm25Negatives.length >= counts.bm25 || hits.length < k || k >= MAX_BM25_ROWS) break;
  }

  let inSecIds: number[] = [];
  let inDocIds: number[] = [];
  if (counts.inSec > 0 || counts.inDoc > 0) {
    const keys = (await documentPassageKeys(db, positive.documentId)).map((k) => ({ ...k, documentId: positive.documentId }));
    const open = keys.filter((k) => !excluded(k));
    if (positive.sectionId !== null) {
      inSecIds = sample(
        open.filter((k) => k.sectionId === positive.sectionId),
        counts.inSec,
        random,
      ).map((k) => k.passageId);
    }
    const drawn = new Set(inSecIds);
    inDocIds = sample(
      open.filter((k) => !drawn.has(k.passageId)),
      counts.inDoc,
      random,
    ).map((k) => k.passageId);
  }
  const judgedIds = (c.judgedNegativeIds ?? []).filter((id) => id !== positive.passageId);
  const texts = new Map((await pairPassages(db, [...inSecIds, ...inDocIds, ...judgedIds])).map((r) => [r.passageId, toPassage(r)]));
  const pick = (ids: number[]) => ids.flatMap((id) => texts.get(id) ?? []);

  let documents: PairDocument[] = [];
  if (counts.documents > 0) {
    const notNegative = new Set([positive.documentId, c.questionDocumentId]);
    const hits = (await search(db, lexicalSearch(c.question, 'LEXICAL_DOCUMENTS', counts.documents + 2, bm25))).documents;
    documents = await documentTitles(
      db,
      hits
        .map((h) => h.documentId)
        .filter((id) => !notNegative.has(id))
        .slice(0, counts.documents),
    );
  }
  const [positiveDocument] = await documentTitles(db, [positive.documentId]);
  return {
    kind: c.kind,
    question: c.question,
    questionPassageId: c.questionPassageId,
    positive,
    positiveDocument,
    negatives: { bm25: bm25Negatives, inDoc: pick(inDocIds), inSec: pick(inSecIds), documents, judged: pick(judgedIds) },
  };
}
