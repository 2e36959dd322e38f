import { badUserInput } from '../errors';
import type { Database } from '../store/db';
import type { PseudoQuestion } from './pseudo-questions';

/** A labelled question for a tune: the passages (by id) or documents (by key) that answer it. */
export interface LabelledQuestionInput {
  question: string;
  passageIds?: readonly number[];
  documentKeys?: readonly string[];
}

/** A labelled question needs its text and at least one answer; `where` names it in the refusal. */
export function checkLabelled(q: LabelledQuestionInput, where: string): void {
  if (!q.question.trim() || (q.passageIds?.length ?? 0) + (q.documentKeys?.length ?? 0) === 0) {
    throw badUserInput(`${where} needs a question and passageIds or documentKeys`, 'questions');
  }
}

/**
 * Labelled questions as a tune reads them (`dhr tune --questions`, tuneRetrievalSettings'
 * `questions`): each needs a question and at least one answer; `describe` names one in a refusal.
 * A document key the store lacks answers nothing (the question still counts against the others).
 */
export async function labelledQuestions(
  db: Database,
  inputs: readonly LabelledQuestionInput[],
  describe: (index: number) => string,
): Promise<PseudoQuestion[]> {
  inputs.forEach((q, i) => checkLabelled(q, describe(i)));
  const keys = [...new Set(inputs.flatMap((q) => q.documentKeys ?? []))];
  const byKey = new Map(
    (await db.query<{ key: string; id: number }>('SELECT key, id FROM documents WHERE key = ANY($1::text[])', [keys])).map((r) => [r.key, r.id]),
  );
  return inputs.map((q) => {
    const passages = new Set(q.passageIds ?? []);
    const documents = new Set((q.documentKeys ?? []).map((k) => byKey.get(k)).filter((id): id is number => id !== undefined));
    return { kind: 'feedback' as const, question: q.question, excluded: [], answers: (k) => passages.has(k.passageId) || documents.has(k.documentId) };
  });
}
