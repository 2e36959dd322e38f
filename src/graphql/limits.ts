import { Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { ErrorCode } from '../errors';
import { measureOperation, overlongArgument } from './armor';
import { refusalError } from './errors';

export { DEFAULT_PAGE_ESTIMATE, UNSIZED_LIST_ESTIMATE } from './armor';

/**
 * Static limits on an operation, checked after validation and before anything runs: depth
 * (nesting of fields), an estimated cost (fields multiplied by the list sizes their arguments
 * imply), the retrievals started and their k1 × k2 (the work behind a cheap-looking response), aliases, directives, and the length of string arguments. The measures come from
 * libraries (armor.ts). Introspection fields (`__schema`, `__type`, `__typename`) cost nothing
 * and `__schema` adds no depth, so tools such as Apollo Sandbox can always read the schema.
 */

export interface OperationLimits {
  maxQueryDepth: number;
  maxQueryCost: number;
  maxAliases: number;
  maxDirectives: number;
  maxQueryNodes: number;
  maxArgumentLength: number;
  maxRetrieves: number;
  maxRetrievalWork: number;
}

/** Throws QUERY_TOO_DEEP, QUERY_TOO_COSTLY or BAD_USER_INPUT naming the limit and the operation's value. */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown> | undefined,
  limits: OperationLimits,
): void {
  const m = measureOperation(schema, document, operation, rawVariables, limits.maxQueryNodes);
  if (m.depth > limits.maxQueryDepth) {
    throw refusalError(ErrorCode.QUERY_TOO_DEEP, `query depth ${m.depth} is over the limit of ${limits.maxQueryDepth} (MAX_QUERY_DEPTH)`);
  }
  if (m.aliases > limits.maxAliases) {
    throw refusalError(ErrorCode.QUERY_TOO_COSTLY, `query has ${m.aliases} aliases, over the limit of ${limits.maxAliases} (MAX_ALIASES)`);
  }
  if (m.directives > limits.maxDirectives) {
    throw refusalError(ErrorCode.QUERY_TOO_COSTLY, `query has ${m.directives} directives, over the limit of ${limits.maxDirectives} (MAX_DIRECTIVES)`);
  }
  if (m.tooManyNodes) {
    throw refusalError(ErrorCode.QUERY_TOO_COSTLY, `query selects more than ${limits.maxQueryNodes} fields once its fragments are expanded (MAX_QUERY_NODES)`);
  }
  if (m.cost !== undefined && m.cost > limits.maxQueryCost) {
    throw refusalError(
      ErrorCode.QUERY_TOO_COSTLY,
      `query cost ${m.cost} is over the limit of ${limits.maxQueryCost} (MAX_QUERY_COST); ask for smaller pages (first, k1, k2) or fewer nested lists`,
    );
  }
  if (m.retrieves > limits.maxRetrieves) {
    throw refusalError(
      ErrorCode.QUERY_TOO_COSTLY,
      `query starts ${m.retrieves} retrievals, over the limit of ${limits.maxRetrieves} per operation (MAX_RETRIEVES); send them as separate requests`,
    );
  }
  if (m.retrievalWork > limits.maxRetrievalWork) {
    throw refusalError(
      ErrorCode.QUERY_TOO_COSTLY,
      `query's retrievals ask for k1 × k2 = ${m.retrievalWork} in all, over the limit of ${limits.maxRetrievalWork} (MAX_RETRIEVAL_WORK); ask for smaller k1 or k2`,
    );
  }
  const long = overlongArgument(schema, document, operation, rawVariables, limits.maxArgumentLength);
  if (long) {
    throw refusalError(
      ErrorCode.BAD_USER_INPUT,
      `${long.argument} is ${long.length} characters long, over the limit of ${limits.maxArgumentLength} (MAX_ARGUMENT_LENGTH)`,
      { argument: long.argument },
    );
  }
}

/** The measures alone, for tests and docs. */
export function estimateOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  rawVariables?: Record<string, unknown>,
  maxQueryNodes = 10_000,
): { depth: number; cost: number; retrieves: number; retrievalWork: number } {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('no operation in document');
  const m = measureOperation(schema, document, operation, rawVariables, maxQueryNodes);
  if (m.cost === undefined) throw new Error('cost not measured (too many nodes or bad variables)');
  return { depth: m.depth, cost: m.cost, retrieves: m.retrieves, retrievalWork: m.retrievalWork };
}
