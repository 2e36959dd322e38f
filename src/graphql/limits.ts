import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { DomainError, ErrorCode } from '../errors';

/**
 * Static limits on an operation, checked after validation and before anything runs:
 * depth (nesting of fields) and an estimated cost (fields multiplied by the list sizes their
 * arguments imply). Introspection fields (`__schema`, `__type`, `__typename`) are free, so
 * tools such as Apollo Sandbox can always read the schema.
 */

/** Arguments that say how many items a field returns (`first` of connections, `k1`/`k2` of retrieve). */
const SIZE_ARGUMENTS = ['first', 'k1', 'k2'];
/** Page size of a connection when `first` is not given (the resolvers' default page). */
export const DEFAULT_PAGE_ESTIMATE = 20;
/** Items assumed for a list with no size argument (sections, children, toc, links, outcomes). */
export const UNSIZED_LIST_ESTIMATE = 10;

export interface OperationLimits {
  maxQueryDepth: number;
  maxQueryCost: number;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

/** Throws QUERY_TOO_DEEP or QUERY_TOO_COSTLY naming the limit and the operation's value. */
export function checkOperationLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown> | undefined,
  limits: OperationLimits,
): void {
  const walk = walkOf(schema, document, operation, rawVariables);
  const root = rootType(schema, operation);
  if (!root) return;
  const depth = operationDepth(walk, root, operation.selectionSet);
  if (depth > limits.maxQueryDepth) {
    throw new DomainError(ErrorCode.QUERY_TOO_DEEP, `query depth ${depth} is over the limit of ${limits.maxQueryDepth} (MAX_QUERY_DEPTH)`);
  }
  const cost = operationCost(walk, root, operation.selectionSet, false);
  if (cost > limits.maxQueryCost) {
    throw new DomainError(
      ErrorCode.QUERY_TOO_COSTLY,
      `query cost ${cost} is over the limit of ${limits.maxQueryCost} (MAX_QUERY_COST); ask for smaller pages (first, k1, k2) or fewer nested lists`,
    );
  }
}

/** The estimate alone, for tests and docs. */
export function estimateOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  rawVariables?: Record<string, unknown>,
): { depth: number; cost: number } {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('no operation in document');
  const walk = walkOf(schema, document, operation, rawVariables);
  const root = rootType(schema, operation);
  if (!root) throw new Error(`schema has no ${operation.operation} type`);
  return { depth: operationDepth(walk, root, operation.selectionSet), cost: operationCost(walk, root, operation.selectionSet, false) };
}

function walkOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown> | undefined,
): Walk {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  // Bad variables are execution's to report; the estimate then uses argument defaults.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables ?? {});
  return { schema, fragments, variables: coerced.coerced ?? {} };
}

function rootType(schema: GraphQLSchema, operation: OperationDefinitionNode): GraphQLCompositeType | undefined {
  return schema.getRootType(operation.operation) ?? undefined;
}

/** Each field selected in a selection set with the type it was selected on (fragments expanded). */
function* fieldsOf(
  walk: Walk,
  parent: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
): Generator<{ node: FieldNode; parent: GraphQLCompositeType }> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      yield { node: selection, parent };
      continue;
    }
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? walk.fragments.get(selection.name.value) : selection;
    if (!fragment) continue;
    const condition = fragment.typeCondition ? walk.schema.getType(fragment.typeCondition.name.value) : parent;
    if (condition && isCompositeType(condition)) yield* fieldsOf(walk, condition, fragment.selectionSet);
  }
}

function fieldDefinition(parent: GraphQLCompositeType, name: string) {
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}

function operationDepth(walk: Walk, parent: GraphQLCompositeType, selectionSet: SelectionSetNode): number {
  let deepest = 0;
  for (const { node, parent: on } of fieldsOf(walk, parent, selectionSet)) {
    if (node.name.value.startsWith('__')) continue;
    const def = fieldDefinition(on, node.name.value);
    const child = def ? getNamedType(def.type) : undefined;
    const below = node.selectionSet && child && isCompositeType(child) ? operationDepth(walk, child, node.selectionSet) : 0;
    deepest = Math.max(deepest, 1 + below);
  }
  return deepest;
}

/**
 * Every field costs 1, plus its selections times the items it returns: the size argument when
 * it has one (`first` defaults to a page of 20), 1 for a list right under a sized field (the
 * edges of a connection, the passages of a retrieval), and 10 for any other list.
 */
function operationCost(walk: Walk, parent: GraphQLCompositeType, selectionSet: SelectionSetNode, parentSized: boolean): number {
  let total = 0;
  for (const { node, parent: on } of fieldsOf(walk, parent, selectionSet)) {
    if (node.name.value.startsWith('__')) continue;
    const def = fieldDefinition(on, node.name.value);
    if (!def) continue;
    let args: Record<string, unknown> = {};
    try {
      args = getArgumentValues(def, node, walk.variables);
    } catch {
      // invalid arguments fail in execution; estimate with defaults
    }
    const sizes = SIZE_ARGUMENTS.filter((name) => def.args.some((a) => a.name === name)).map((name) => {
      const value = args[name];
      if (typeof value === 'number') return value;
      return name === 'first' ? DEFAULT_PAGE_ESTIMATE : 1;
    });
    const sized = sizes.length > 0;
    const items = sized
      ? Math.max(1, ...sizes)
      : isListType(getNullableType(def.type))
        ? parentSized
          ? 1
          : UNSIZED_LIST_ESTIMATE
        : 1;
    const child = getNamedType(def.type);
    const below = node.selectionSet && isCompositeType(child) ? operationCost(walk, child, node.selectionSet, sized) : 0;
    total += 1 + items * below;
  }
  return total;
}
