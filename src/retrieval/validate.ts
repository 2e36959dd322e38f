import { DomainError, ErrorCode } from '../errors';
import { RETRIEVAL_MODES, type RetrievalMode } from './modes';
import type { RetrievalFilter } from './types';

/** The documented limits of `retrieve`. */
export const RETRIEVAL_LIMITS = {
  maxQuestionChars: 2000,
  maxK: 1000,
  lambdaMin: 0,
  lambdaMax: 10,
  alphaMin: 0,
  alphaMax: 1,
  maxFilterIds: 1000,
  maxFilterSources: 100,
  maxAutocut: 100,
} as const;

/** A bad argument: names the argument and says what is allowed (BAD_USER_INPUT to clients). */
export class RetrievalInputError extends DomainError {
  constructor(argument: string, message: string) {
    super(ErrorCode.BAD_USER_INPUT, message, { argument });
    this.name = 'RetrievalInputError';
  }
}

/**
 * What keeps a string out of PostgreSQL text (a NUL, a lone surrogate), as words that follow its
 * name; undefined when it is fine. Every string argument of the API is checked with it.
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (!value.isWellFormed()) return 'contains malformed Unicode (a lone surrogate)';
  return undefined;
}

export interface RetrieveArgs {
  question: string;
  k1: number;
  k2: number;
  /** Left out: the mode's tuned default (MODES[mode].defaults). */
  lambda?: number;
  /** Weight of the dense score in the hybrid modes; the mode's tuned default when left out. */
  alpha?: number;
  /** HYBRID_HIERARCHICAL: the same for its document stage; the mode's tuned default when left out. */
  documentAlpha?: number;
  /** At most this many passages of one document among the k2 returned; left out: the server's PER_DOCUMENT, else the mode's default (none). */
  perDocument?: number;
  /** Left out: the default mode (DEFAULT_MODE, or LEXICAL on a server without encoders). */
  mode?: RetrievalMode;
  /** Only results whose final score is at least this (left out: no bound). */
  minScore?: number;
  /** End the results before this many jumps in the final score (cutoff.ts; left out: no cut). */
  autocut?: number;
  filter?: RetrievalFilter;
}

export function validateRetrieveArgs(args: RetrieveArgs): RetrieveArgs {
  const question = args.question.trim();
  if (question.length === 0) throw new RetrievalInputError('question', 'question must not be empty');
  if (question.length > RETRIEVAL_LIMITS.maxQuestionChars) {
    throw new RetrievalInputError(
      'question',
      `question is ${question.length} characters, over the limit of ${RETRIEVAL_LIMITS.maxQuestionChars}`,
    );
  }
  const problem = textProblem(question);
  if (problem) throw new RetrievalInputError('question', `question ${problem}`);
  for (const name of ['k1', 'k2'] as const) {
    const k = args[name];
    if (!Number.isInteger(k) || k < 1 || k > RETRIEVAL_LIMITS.maxK) {
      throw new RetrievalInputError(name, `${name} must be an integer from 1 to ${RETRIEVAL_LIMITS.maxK}, got ${k}`);
    }
  }
  if (args.lambda !== undefined && (!Number.isFinite(args.lambda) || args.lambda < RETRIEVAL_LIMITS.lambdaMin || args.lambda > RETRIEVAL_LIMITS.lambdaMax)) {
    throw new RetrievalInputError(
      'lambda',
      `lambda must be a finite number from ${RETRIEVAL_LIMITS.lambdaMin} to ${RETRIEVAL_LIMITS.lambdaMax}, got ${args.lambda}`,
    );
  }
  for (const name of ['alpha', 'documentAlpha'] as const) {
    const a = args[name];
    if (a !== undefined && (!Number.isFinite(a) || a < RETRIEVAL_LIMITS.alphaMin || a > RETRIEVAL_LIMITS.alphaMax)) {
      throw new RetrievalInputError(
        name,
        `${name} must be a finite number from ${RETRIEVAL_LIMITS.alphaMin} (BM25 only) to ${RETRIEVAL_LIMITS.alphaMax} (dense only), got ${a}`,
      );
    }
  }
  const n = args.perDocument;
  if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > RETRIEVAL_LIMITS.maxK)) {
    throw new RetrievalInputError('perDocument', `perDocument must be an integer from 1 to ${RETRIEVAL_LIMITS.maxK} (k2 or more: no bound), got ${n}`);
  }
  if (args.minScore !== undefined && !Number.isFinite(args.minScore)) {
    throw new RetrievalInputError('minScore', `minScore must be a finite number, got ${args.minScore}`);
  }
  const jumps = args.autocut;
  if (jumps !== undefined && (!Number.isInteger(jumps) || jumps < 1 || jumps > RETRIEVAL_LIMITS.maxAutocut)) {
    throw new RetrievalInputError('autocut', `autocut must be an integer from 1 to ${RETRIEVAL_LIMITS.maxAutocut} (the jumps in score to cut at), got ${jumps}`);
  }
  if (args.mode !== undefined && !RETRIEVAL_MODES.includes(args.mode)) {
    throw new RetrievalInputError('mode', `mode must be one of ${RETRIEVAL_MODES.join(', ')}, got ${args.mode}`);
  }
  const f = args.filter;
  if (f?.documentIds && f.documentIds.length > RETRIEVAL_LIMITS.maxFilterIds) {
    throw new RetrievalInputError('filter.documentIds', `filter.documentIds has ${f.documentIds.length} ids, over the limit of ${RETRIEVAL_LIMITS.maxFilterIds}`);
  }
  if (f?.sources && f.sources.length > RETRIEVAL_LIMITS.maxFilterSources) {
    throw new RetrievalInputError('filter.sources', `filter.sources has ${f.sources.length} items, over the limit of ${RETRIEVAL_LIMITS.maxFilterSources}`);
  }
  return { ...args, question };
}
