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

/** Judgements inserted per statement while importing. */
const IMPORT_BATCH = 500;

/** A feedback JSONL file's judgements, every line read and checked (a bad one refused, named by its number; an unreadable file named). */
export async function readFeedbackFile(path: string): Promise<{ input: FeedbackInput; line: number }[]> {
  const items: { input: FeedbackInput; line: number }[] = [];
  try {
    for await (const item of feedbackLines(path)) items.push(item);
  } catch (error) {
    throw readFailure(path, error);
  }
  return items;
}

/**
 * Stores judgements in one transaction (importFeedback, `dhr feedback import`), IMPORT_BATCH an
 * insert: one that names an unknown passage rolls every one back, named by `describe`.
 */
export async function importFeedback(
  db: Database,
  inputs: readonly FeedbackInput[],
  describe: (index: number) => string,
): Promise<{ imported: number; relevant: number }> {
  return db.transaction(async (tx) => {
    let relevant = 0;
    for (let from = 0; from < inputs.length; from += IMPORT_BATCH) {
      const rows: FeedbackRow[] = await insertFeedback(tx, inputs.slice(from, from + IMPORT_BATCH), (i) => describe(from + i));
      relevant += rows.filter((r) => r.relevant).length;
    }
    return { imported: inputs.length, relevant };
  });
}
