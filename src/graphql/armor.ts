import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import {
  getNamedType,
  getNullableType,
  isInputObjectType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  TypeInfo,
  validate,
  valueFromAST,
  visit,
  visitWithTypeInfo,
  getVariableValues,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';

/**
 * What an operation asks for, measured by libraries that visit each fragment once
 * (@escape.tech/graphql-armor for depth, aliases and directives; graphql-query-complexity for
 * cost, which gives up after MAX_QUERY_NODES selections, so a fragment that spreads the next one
 * twice per level cannot make the walk exponential). limits.ts turns the measures into typed errors.
 */

/** Arguments that say how many items a field returns (`first`/`last` of connections, `k1`/`k2` of retrieve). */
export const SIZE_ARGUMENTS = ['first', 'last', 'k1', 'k2'];
/** Page size of a connection when `first` is not given (the resolvers' default page). */
export const DEFAULT_PAGE_ESTIMATE = 20;
/** Items assumed for a list with no size argument (sections, children, toc, links, outcomes). */
export const UNSIZED_LIST_ESTIMATE = 10;

export interface OperationMeasures {
  depth: number;
  aliases: number;
  directives: number;
  /** Undefined when the selections passed maxQueryNodes (the walk stopped) or the variables do not coerce (execution reports them). */
  cost?: number;
  tooManyNodes: boolean;
  /** Retrievals the operation starts (fields sized by both k1 and k2), fragments and aliases expanded. */
  retrieves: number;
  /** Σ k1 × k2 over those retrievals: the document–passage pairs stage 2 may score, the work a retrieval starts. */
  retrievalWork: number;
}

/** Only the chosen operation and the fragments: the armor rules measure every operation in a document. */
function alone(document: DocumentNode, operation: OperationDefinitionNode): DocumentNode {
  return { ...document, definitions: document.definitions.filter((d) => d === operation || d.kind === Kind.FRAGMENT_DEFINITION) };
}

export function measureOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> | undefined,
  maxQueryNodes: number,
): OperationMeasures {
  const doc = alone(document, operation);
  const measures: OperationMeasures = { depth: 0, aliases: 0, directives: 0, tooManyNodes: false, retrieves: 0, retrievalWork: 0 };
  // Limits of Infinity: the rules only measure (onAccept); the caller decides, with our error codes.
  validate(
    schema,
    doc,
    [
      maxDepthRule({ n: Infinity, flattenFragments: true, ignoreIntrospection: true, onAccept: [(_, { n }) => (measures.depth = n)] }),
      maxAliasesRule({ n: Infinity, onAccept: [(_, { n }) => (measures.aliases = n)] }),
      maxDirectivesRule({ n: Infinity, onAccept: [(_, { n }) => (measures.directives = n)] }),
    ],
    { maxErrors: 1 },
  );
  try {
    measures.cost = getComplexity({ schema, query: doc, variables, estimators: [retrievalCounter(measures), costEstimator(schema)], maxQueryNodes });
  } catch (error) {
    measures.retrieves = 0;
    measures.retrievalWork = 0;
    if (error instanceof Error && /maximum allowed number of nodes/.test(error.message)) measures.tooManyNodes = true;
    // otherwise the variables do not coerce: execution refuses them before anything runs
  }
  return measures;
}

/**
 * Counts the retrievals an operation starts, on the same walk as the cost (so fragments, aliases
 * and @skip/@include count as they run), and returns nothing so the cost estimator prices the field.
 * The cost bounds what a response carries; k1 × k2 bounds the work behind it, which a cheap
 * selection (`{ r: retrieve(k1: 1000, k2: 1000) { timings { totalMs } } }`) does not show.
 */
function retrievalCounter(measures: OperationMeasures): ComplexityEstimator {
  return ({ field, args }) => {
    if (!RETRIEVAL_SIZES.every((name) => field.args.some((a) => a.name === name))) return undefined;
    const [k1, k2] = RETRIEVAL_SIZES.map((name) => (typeof args[name] === 'number' ? (args[name] as number) : 1));
    measures.retrieves += 1;
    measures.retrievalWork += k1 * k2;
    return undefined;
  };
}

/** The sizes of a retrieval: documents stage 1 keeps, passages returned. */
const RETRIEVAL_SIZES = ['k1', 'k2'] as const;

const estimators = new WeakMap<GraphQLSchema, ComplexityEstimator>();

/**
 * Every field costs 1, plus its selections times the items it returns: the size argument when
 * it has one (`first` defaults to a page of 20 when `last` is not given either; `ids` counts its
 * ids), 1 for a list on a type that a sized field
 * returns (the edges of a connection, the passages of a retrieval), and 10 for any other list.
 * Introspection fields are free.
 */
function costEstimator(schema: GraphQLSchema): ComplexityEstimator {
  let estimator = estimators.get(schema);
  if (estimator) return estimator;
  const pageTypes = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInterfaceType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.args.some((a) => SIZE_ARGUMENTS.includes(a.name))) pageTypes.add(getNamedType(field.type).name);
    }
  }
  estimator = ({ field, args, childComplexity, type }) => {
    if (field.name.startsWith('__')) return 0;
    const sizes = SIZE_ARGUMENTS.filter((name) => field.args.some((a) => a.name === name)).map((name) => {
      const value = args[name];
      if (typeof value === 'number') return value;
      // The default page applies when neither first nor last is given.
      return name === 'first' && typeof args.last !== 'number' ? DEFAULT_PAGE_ESTIMATE : 1;
    });
    // nodes(ids): one item per id.
    if (Array.isArray(args.ids)) sizes.push(args.ids.length);
    const items =
      sizes.length > 0 ? Math.max(1, ...sizes) : isListType(getNullableType(field.type)) ? (pageTypes.has(type.name) ? 1 : UNSIZED_LIST_ESTIMATE) : 1;
    return 1 + items * childComplexity;
  };
  estimators.set(schema, estimator);
  return estimator;
}

/** Arguments whose strings are content rather than something a query matches on (bounded by MAX_DOCUMENT_BYTES). */
const CONTENT_ARGUMENTS = new Set(['Mutation.ingestDocuments.documents', 'Mutation.startIngest.documents']);

/**
 * The longest string in any argument of the operation (literals and variables, inside lists and
 * input objects), with the argument's name; undefined when none is longer than `max`. Content
 * arguments (ingested documents) are exempt.
 */
export function overlongArgument(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown> | undefined,
  max: number,
): { argument: string; length: number } | undefined {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  const variables = coerced.coerced ?? {};
  const typeInfo = new TypeInfo(schema);
  let found: { argument: string; length: number } | undefined;
  visit(
    alone(document, operation),
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        if (found) return;
        const arg = typeInfo.getArgument();
        const field = typeInfo.getFieldDef();
        const parent = typeInfo.getParentType();
        if (!arg || !field || !parent || CONTENT_ARGUMENTS.has(`${parent.name}.${field.name}.${arg.name}`)) return;
        const length = longestString(valueFromAST(node.value, arg.type as GraphQLInputType, variables), arg.type);
        if (length > max) found = { argument: arg.name, length };
      },
    }),
  );
  return found;
}

function longestString(value: unknown, type: GraphQLInputType): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((m: number, v) => Math.max(m, longestString(v, type)), 0);
  if (value && typeof value === 'object') {
    // JSON scalars (metadata filters) are walked too, keys included: their strings reach SQL as well.
    const keys = isInputObjectType(getNamedType(type)) ? false : true;
    return Object.entries(value).reduce((m: number, [k, v]) => Math.max(m, keys ? k.length : 0, longestString(v, type)), 0);
  }
  return 0;
}
