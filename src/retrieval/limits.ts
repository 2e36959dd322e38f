import { RANKING_LIMITS } from './parameters';

/**
 * The documented limits of `retrieve`. A module of its own: the request parameters' table
 * (request-parameters.ts) names them in its descriptions, and validation (validate.ts) takes
 * that table's types, so neither may import the other for them.
 */
export const RETRIEVAL_LIMITS = {
  maxQuestionChars: 2000,
  maxK: 1000,
  ...RANKING_LIMITS,
  maxFilterIds: 1000,
  maxFilterSources: 100,
  maxAutocut: 100,
} as const;
