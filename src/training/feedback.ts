import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { badUserInput, DomainError } from '../errors';
import { RETRIEVAL_LIMITS, textProblem } from '../retrieval/validate';
import type { Database } from '../store/db';
import { insertFeedback, type FeedbackInput, type FeedbackRow } from '../store/feedback';

/** The checks a judgement gets wherever it comes from (the mutation, an imported line). */
export function checkFeedback(question: string, passageId: number, where = ''): FeedbackInput['question'] {
  const at = where ? `${where}: ` : '';
  const trimmed = question.trim();
  if (trimmed === '') throw badUserInput(`${at}question must not be empty`, 'question');
  if (trimmed.length > RETRIEVAL_LIMITS.maxQuestionChars) {
    throw badUserInput(`${at}question is longer than ${RETRIEVAL_LIMITS.maxQuestionChars} characters`, 'question');
  }
  const problem = textProblem(trimmed);
  if (problem) throw badUserInput(`${at}question ${problem}`, 'question');
  if (!Number.isInteger(passageId) || passageId < 1 || passageId > 2_147_483_647) {
    throw badUserInput(`${at}passageId must be a positive integer id`, 'passageId');
  }
  return trimmed;
}

/** One line of a feedback JSONL file: {"question": string, "passageId": number, "relevant": boolean}. */
export function parseFeedbackLine(line: string, lineNumber: number): FeedbackInput {
  const where = `line ${lineNumber}`;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw badUserInput(`${where}: not JSON`, 'file');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badUserInput(`${where}: must be a JSON object`, 'file');
  const { question, passageId, relevant, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw badUserInput(`${where}: unknown field ${extra.map((k) => JSON.stringify(k)).join(', ')}`, 'file');
  if (typeof question !== 'string') throw badUserInput(`${where}: question must be a string`, 'question');
  // Ids travel as numbers or as the API's ID strings.
  const id = typeof passageId === 'string' && /^\d{1,10}$/.test(passageId) ? Number(passageId) : passageId;
  if (typeof id !== 'number') throw badUserInput(`${where}: passageId must be a positive integer id`, 'passageId');
  if (typeof relevant !== 'boolean') throw badUserInput(`${where}: relevant must be true or false`, 'relevant');
  return { question: checkFeedback(question, id, where), passageId: id, relevant };
}

/** The judgements of a feedback JSONL file with their line numbers, read line by line (blank lines skipped); a bad line throws, naming it. */
export async function* feedbackLines(path: string): AsyncGenerator<{ input: FeedbackInput; line: number }> {
  const reader = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let lineNumber = 0;
  try {
    for await (const line of reader) {
      lineNumber += 1;
      if (line.trim() === '') continue;
      yield { input: parseFeedbackLine(line, lineNumber), line: lineNumber };
    }
  } finally {
    reader.close();
  }
}

/** A refusal as it is; anything else while reading (no such file) as the file that cannot be read. */
export const readFailure = (path: string, error: unknown): DomainError =>
  error instanceof DomainError ? error : badUserInput(`cannot read ${path}: ${(error as Error).message}`, 'file');

/** Lines inserted per statement while importing. */
const IMPORT_BATCH = 500;

/**
 * Imports a feedback JSONL file in one transaction, read line by line (blank lines skipped): a bad
 * line or one naming an unknown passage rolls everything back and the error names its line.
 */
export async function importFeedbackFile(db: Database, path: string): Promise<{ imported: number; relevant: number }> {
  return db.transaction(async (tx) => {
    let imported = 0;
    let relevant = 0;
    let batch: { input: FeedbackInput; line: number }[] = [];
    const flush = async () => {
      const lines = batch;
      batch = [];
      const rows: FeedbackRow[] = await insertFeedback(
        tx,
        lines.map((l) => l.input),
        (i) => `line ${lines[i].line}`,
      );
      imported += rows.length;
      relevant += rows.filter((r) => r.relevant).length;
    };
    try {
      for await (const item of feedbackLines(path)) {
        batch.push(item);
        if (batch.length >= IMPORT_BATCH) await flush();
      }
    } catch (error) {
      throw readFailure(path, error);
    }
    if (batch.length) await flush();
    return { imported, relevant };
  });
}
