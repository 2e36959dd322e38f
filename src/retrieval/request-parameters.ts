import { RETRIEVE_DEFAULTS } from './defaults';
import { DEFAULT_MODE, type RetrievalMode } from './modes';
import { RETRIEVAL_LIMITS } from './limits';

/**
 * retrieve's arguments that are not ranking parameters (those are parameters.ts' table, and a
 * corpus or the environment may set them): what a question alone sets, each with its GraphQL
 * type, its default where it has one, and the description the schema shows. The GraphQL arguments
 * are generated from this table and the ranking table (graphql/resolvers/retrieval.ts).
 */
export interface RequestArgument {
  type: 'int' | 'float' | 'boolean' | 'mode';
  /** The value when the question leaves it out (none: left out means left out). */
  default?: number | boolean;
  description: string;
}

export const REQUEST_ARGUMENTS = {
  k1: { type: 'int', default: RETRIEVE_DEFAULTS.k1, description: `Documents stage 1 keeps (1–${RETRIEVAL_LIMITS.maxK}).` },
  k2: { type: 'int', default: RETRIEVE_DEFAULTS.k2, description: `Passages returned (1–${RETRIEVAL_LIMITS.maxK}).` },
  mode: { type: 'mode', description: `Left out: ${DEFAULT_MODE} (LEXICAL on a server without encoders).` },
  minScore: {
    type: 'float',
    description: 'Only results whose final score (score) is at least this; applied after ranking, so fewer than k2 may come back. Left out: no bound.',
  },
  autocut: {
    type: 'int',
    description: `Ends the results at a jump in the final score, as Weaviate’s autocut: 1 keeps those before the first jump, 2 before the second (1–${RETRIEVAL_LIMITS.maxAutocut}). After minScore. Left out: no cut.`,
  },
  exact: { type: 'boolean', default: false, description: 'Score every candidate exactly instead of using HNSW and bounded postings (slower).' },
} as const satisfies Record<string, RequestArgument>;

export type RequestArgumentName = keyof typeof REQUEST_ARGUMENTS;
export const REQUEST_ARGUMENT_NAMES = Object.keys(REQUEST_ARGUMENTS) as RequestArgumentName[];

/** The TypeScript value of each argument type. */
interface ArgumentValue {
  int: number;
  float: number;
  boolean: boolean;
  mode: RetrievalMode;
}
type ValueOf<K extends RequestArgumentName> = ArgumentValue[(typeof REQUEST_ARGUMENTS)[K]['type']];
/** The arguments with a default: a question that leaves them out still has them. */
type Defaulted = { [K in RequestArgumentName]: (typeof REQUEST_ARGUMENTS)[K] extends { readonly default: unknown } ? K : never }[RequestArgumentName];

/**
 * The request arguments' types, from the table: those with a default always there, the others
 * optional, and null too where `Left` is null (GraphQL lets a client send null for them).
 */
export type RequestArguments<Left = never> = { [K in Defaulted]: ValueOf<K> } & { [K in Exclude<RequestArgumentName, Defaulted>]?: ValueOf<K> | Left };
