import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { DomainError, ErrorCode } from '../errors';

import { PAIR_KINDS, type PairDocument, type PairKind, type PairPassage, type TrainingPair } from './pair';

export type { PairDocument, PairKind, PairPassage, TrainingPair };

/** A pairs file line that is not a training pair; names the file, the line and the field. */
export class PairsFileError extends DomainError {
  constructor(
    readonly file: string,
    readonly line: number,
    problem: string,
  ) {
    super(ErrorCode.BAD_USER_INPUT, `${file}:${line}: ${problem}`, { argument: 'pairs', details: { file, line } });
    this.name = 'PairsFileError';
  }
}

type Check = (value: unknown, path: string) => string | undefined;

const isId = (v: unknown) => Number.isInteger(v) && (v as number) > 0;
const id: Check = (v, p) => (isId(v) ? undefined : `${p} must be a positive whole number`);
const text: Check = (v, p) => (typeof v === 'string' ? undefined : `${p} must be a string`);
const object = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function passageProblem(v: unknown, p: string): string | undefined {
  if (!object(v)) return `${p} must be an object`;
  return (
    id(v.passageId, `${p}.passageId`) ??
    id(v.documentId, `${p}.documentId`) ??
    (v.sectionId === null ? undefined : id(v.sectionId, `${p}.sectionId`)) ??
    (Array.isArray(v.titlePath) && v.titlePath.every((t) => typeof t === 'string') ? undefined : `${p}.titlePath must be an array of strings`) ??
    text(v.text, `${p}.text`)
  );
}

function documentProblem(v: unknown, p: string): string | undefined {
  if (!object(v)) return `${p} must be an object`;
  return id(v.documentId, `${p}.documentId`) ?? text(v.title, `${p}.title`);
}

function listProblem(v: unknown, p: string, item: (x: unknown, p: string) => string | undefined): string | undefined {
  if (!Array.isArray(v)) return `${p} must be an array`;
  for (let i = 0; i < v.length; i++) {
    const problem = item(v[i], `${p}[${i}]`);
    if (problem) return problem;
  }
  return undefined;
}

/** What is wrong with a parsed line, or undefined for a valid pair. */
export function pairProblem(v: unknown): string | undefined {
  if (!object(v)) return 'not a JSON object';
  if (!PAIR_KINDS.includes(v.kind as PairKind)) return `kind must be one of ${PAIR_KINDS.join(', ')}`;
  if (typeof v.question !== 'string' || v.question.trim() === '') return 'question must be a non-empty string';
  if (v.questionPassageId !== null && !isId(v.questionPassageId)) return 'questionPassageId must be a positive whole number or null';
  const n = v.negatives;
  return (
    passageProblem(v.positive, 'positive') ??
    documentProblem(v.positiveDocument, 'positiveDocument') ??
    (object(n)
      ? (listProblem(n.bm25, 'negatives.bm25', passageProblem) ??
        listProblem(n.inDoc, 'negatives.inDoc', passageProblem) ??
        listProblem(n.inSec, 'negatives.inSec', passageProblem) ??
        listProblem(n.documents, 'negatives.documents', documentProblem) ??
        (n.judged === undefined ? undefined : listProblem(n.judged, 'negatives.judged', passageProblem)))
      : 'negatives must be an object')
  );
}

/**
 * Streams the pairs of a JSONL file, validating each line; blank lines are skipped. The first bad
 * line throws PairsFileError naming its number, so a caller that trains after reading stores nothing.
 */
export async function* readPairs(file: string): AsyncGenerator<TrainingPair> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const raw of lines) {
      line++;
      if (raw.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch (error) {
        throw new PairsFileError(file, line, `not valid JSON (${(error as Error).message})`);
      }
      const problem = pairProblem(parsed);
      if (problem) throw new PairsFileError(file, line, problem);
      yield parsed as TrainingPair;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new PairsFileError(file, 0, 'no such file');
    throw error;
  } finally {
    lines.close();
    stream.destroy();
  }
}
