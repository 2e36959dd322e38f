import { DomainError, ErrorCode } from '../errors';
import { vectorProblem } from '../ingest/vectors';
import { RETRIEVAL_MODES } from './modes';
import { RETRIEVAL_LIMITS } from './limits';
import { rankingProblem, type RankingLayer } from './parameters';
import type { RequestArguments } from './request-parameters';
import type { RetrievalFilter } from './types';

export { RETRIEVAL_LIMITS };

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

/**
 * A question's arguments. The ranking parameters (parameters.ts) it leaves out are resolved from
 * the corpus's settings, the server's environment, then the mode's defaults (resolveRanking); the
 * request arguments (k1, k2, mode, minScore, autocut) are typed from their table
 * (request-parameters.ts), exact aside: it is how to search, not what (SearchExecution).
 */
export interface RetrieveArgs extends RankingLayer, Omit<RequestArguments, 'exact'> {
  /** The question's text: encoded for the dense side, read by BM25 and answer highlights. Optional when a question vector is given. */
  question?: string;
  /**
   * The question's vector (bring your own vectors), instead of encoding the text: for every
   * question role the mode reads when one model serves them; where two models serve the question
   * roles, each needs its own (questionDocumentVector, questionPassageVector).
   */
  questionVector?: readonly number[];
  /** E_Q^φ(q), compared with document vectors (overrides questionVector for that role). */
  questionDocumentVector?: readonly number[];
  /** E_Q^ψ(q), compared with passage vectors (overrides questionVector for that role). */
  questionPassageVector?: readonly number[];
  filter?: RetrievalFilter;
}

const VECTOR_ARGUMENTS = ['questionVector', 'questionDocumentVector', 'questionPassageVector'] as const;

export function validateRetrieveArgs(args: RetrieveArgs): RetrieveArgs {
  for (const name of VECTOR_ARGUMENTS) {
    const problem = args[name] === undefined ? undefined : vectorProblem(args[name]);
    if (problem) throw new RetrievalInputError(name, `${name} ${problem}`);
    // Cosine and inner product with a zero vector score every item alike: a ranking by nothing.
    if (args[name]?.every((x) => Math.fround(x) === 0)) {
      throw new RetrievalInputError(
        name,
        `${name} is all zeros (as float4): the vector has no direction, so it cannot rank anything; give the question's own vector`,
      );
    }
  }
  if (args.question === undefined) {
    if (VECTOR_ARGUMENTS.every((n) => args[n] === undefined)) {
      throw new RetrievalInputError('question', 'give question (its text), or questionVector for a dense or hybrid mode');
    }
    return validateRest(args, undefined);
  }
  const question = args.question.trim();
  if (question.length === 0) throw new RetrievalInputError('question', 'question must not be empty');
  if (question.length > RETRIEVAL_LIMITS.maxQuestionChars) {
    throw new RetrievalInputError('question', `question is ${question.length} characters, over the limit of ${RETRIEVAL_LIMITS.maxQuestionChars}`);
  }
  const problem = textProblem(question);
  if (problem) throw new RetrievalInputError('question', `question ${problem}`);
  return validateRest(args, question);
}

function validateRest(args: RetrieveArgs, question: string | undefined): RetrieveArgs {
  for (const name of ['k1', 'k2'] as const) {
    const k = args[name];
    if (!Number.isInteger(k) || k < 1 || k > RETRIEVAL_LIMITS.maxK) {
      throw new RetrievalInputError(name, `${name} must be an integer from 1 to ${RETRIEVAL_LIMITS.maxK}, got ${k}`);
    }
  }
  const ranking = rankingProblem(args);
  if (ranking) throw new RetrievalInputError(ranking.name, ranking.message);
  if (args.minScore !== undefined && !Number.isFinite(args.minScore)) {
    throw new RetrievalInputError('minScore', `minScore must be a finite number, got ${args.minScore}`);
  }
  const jumps = args.autocut;
  if (jumps !== undefined && (!Number.isInteger(jumps) || jumps < 1 || jumps > RETRIEVAL_LIMITS.maxAutocut)) {
    throw new RetrievalInputError(
      'autocut',
      `autocut must be an integer from 1 to ${RETRIEVAL_LIMITS.maxAutocut} (the jumps in score to cut at), got ${jumps}`,
    );
  }
  if (args.mode !== undefined && !RETRIEVAL_MODES.includes(args.mode)) {
    throw new RetrievalInputError('mode', `mode must be one of ${RETRIEVAL_MODES.join(', ')}, got ${args.mode}`);
  }
  const f = args.filter;
  if (f?.documentIds && f.documentIds.length > RETRIEVAL_LIMITS.maxFilterIds) {
    throw new RetrievalInputError(
      'filter.documentIds',
      `filter.documentIds has ${f.documentIds.length} ids, over the limit of ${RETRIEVAL_LIMITS.maxFilterIds}`,
    );
  }
  if (f?.sources && f.sources.length > RETRIEVAL_LIMITS.maxFilterSources) {
    throw new RetrievalInputError('filter.sources', `filter.sources has ${f.sources.length} items, over the limit of ${RETRIEVAL_LIMITS.maxFilterSources}`);
  }
  return { ...args, question };
}
