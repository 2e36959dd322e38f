import type { Database } from '../store/db';
import { relevantFeedbackPage } from '../store/feedback';
import {
  abstractPage,
  coMentionPage,
  dualLinkPage,
  PAIR_START,
  pairPassages,
  sectionPage,
  type GroupRow,
  type LinkPairPage,
  type PairCursor,
} from '../store/pairs';
import type { PassageKey, PairCandidate } from './negatives';
import type { PairKind } from './pair';
import { pairRandom, sample } from './random';

/** What every source needs besides the database. */
export interface SourceOptions {
  seed: number;
  pageSize: number;
  maxQuestionWords: number;
  /** Co-mention: the in-degree from which a third document is a hub (null: none is). */
  hubThreshold: number | null;
}

/** The title path as a question: its titles joined with ' › '. */
export const PATH_SEPARATOR = ' › ';

export function clipWords(text: string, max: number): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length <= max ? words.join(' ') : words.slice(0, max).join(' ');
}

const startsWith = (path: readonly string[], prefix: readonly string[]) => path.length >= prefix.length && prefix.every((title, i) => path[i] === title);

/** Link pairs page by page: passage A's text is the question. */
async function* linkCandidates(
  db: Database,
  kind: PairKind,
  page: (after: PairCursor) => Promise<LinkPairPage>,
  o: SourceOptions,
): AsyncGenerator<PairCandidate> {
  let after: PairCursor | null = PAIR_START;
  while (after) {
    const { rows, next }: LinkPairPage = await page(after);
    const questions = new Map((await pairPassages(db, [...new Set(rows.map((r) => r.questionPassageId))])).map((p) => [p.passageId, p]));
    for (const row of rows) {
      const q = questions.get(row.questionPassageId);
      if (!q) continue;
      const positives = new Set(row.positives);
      yield {
        kind,
        question: clipWords(q.text, o.maxQuestionWords),
        questionPassageId: q.passageId,
        questionDocumentId: q.documentId,
        positiveId: row.positivePassageId,
        answers: (p: PassageKey) => positives.has(p.passageId),
      };
    }
    after = next;
  }
}

/**
 * Title-tree pairs: one per group (section, or a document's abstract), the positive drawn from the
 * group's passages. Every passage of the group answers the question equally, so none of them is a
 * negative; `answers` says which passages belong.
 */
async function* groupCandidates(
  kind: PairKind,
  page: (after: number) => Promise<GroupRow[]>,
  answers: (group: GroupRow) => (p: PassageKey) => boolean,
  question: (group: GroupRow) => string,
  o: SourceOptions,
): AsyncGenerator<PairCandidate> {
  let after = 0;
  for (;;) {
    const groups = await page(after);
    if (groups.length === 0) return;
    for (const group of groups) {
      const [positiveId] = sample(group.passageIds, 1, pairRandom(o.seed, kind, 'positive', group.groupId));
      yield { kind, question: question(group), questionPassageId: null, questionDocumentId: null, positiveId, answers: answers(group) };
    }
    after = groups[groups.length - 1].groupId;
  }
}

async function* feedbackCandidates(db: Database, o: SourceOptions): AsyncGenerator<PairCandidate> {
  let after = 0;
  for (;;) {
    const rows = await relevantFeedbackPage(db, after, o.pageSize);
    if (rows.length === 0) return;
    for (const row of rows) {
      const positives = new Set(row.positives);
      yield {
        kind: 'feedback',
        question: row.question,
        questionPassageId: null,
        questionDocumentId: null,
        positiveId: row.passageId,
        answers: (p: PassageKey) => positives.has(p.passageId),
        judgedNegativeIds: row.judgedNegatives,
      };
    }
    after = rows[rows.length - 1].id;
  }
}

/** The candidates of one kind, in key order, a page at a time. */
export function candidates(db: Database, kind: PairKind, o: SourceOptions): AsyncGenerator<PairCandidate> {
  switch (kind) {
    case 'dual-link':
      return linkCandidates(db, kind, (after) => dualLinkPage(db, after, o.pageSize), o);
    case 'co-mention':
      return linkCandidates(db, kind, (after) => coMentionPage(db, o.hubThreshold, after, o.pageSize), o);
    case 'section-path':
      // A passage of a subsection answers its parent's path too: the path is a prefix of its own.
      return groupCandidates(
        kind,
        (after) => sectionPage(db, after, o.pageSize),
        (g) => (p) => p.documentId === g.documentId && startsWith(p.titlePath, g.titlePath),
        (g) => g.titlePath.join(PATH_SEPARATOR),
        o,
      );
    case 'document-title':
      return groupCandidates(
        kind,
        (after) => abstractPage(db, after, o.pageSize),
        (g) => (p) => p.documentId === g.documentId && p.sectionId === null,
        (g) => g.titlePath[0],
        o,
      );
    case 'feedback':
      return feedbackCandidates(db, o);
  }
}
