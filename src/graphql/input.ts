import {
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  TypeInfo,
  typeFromAST,
  valueFromASTUntyped,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { ErrorCode } from '../errors';
import { textProblem } from '../retrieval/validate';
import { refusalError } from './errors';

/**
 * Checks every argument of an operation, literals and variables alike, before anything coerces
 * or runs it: each string (input-object fields and JSON scalars, keys included) must be Unicode
 * PostgreSQL can store (no NUL, no lone surrogate), JSON scalars (metadata, metadata filters) may
 * nest at most MAX_METADATA_DEPTH levels, and a self-nesting input type (ingest sections) at most
 * MAX_SECTION_DEPTH levels. The walk uses an explicit stack, so a value 10,000 levels deep is
 * refused here instead of overflowing graphql-js's recursive variable coercion or ours.
 * Hand-written because no library walks raw variables with their GraphQL types iteratively.
 */

export interface InputLimits {
  maxSectionDepth: number;
  maxMetadataDepth: number;
}

/** Where strings are content checked per document by ingest (one bad document fails alone). */
const CONTENT_ARGUMENTS = new Set(['Mutation.ingestDocuments.documents', 'Mutation.startIngest.documents']);

/** BAD_USER_INPUT naming the argument: HTTP 400, nothing ran. */
function inputError(argument: string, message: string) {
  return refusalError(ErrorCode.BAD_USER_INPUT, message, { argument });
}

/**
 * The argument as clients name it: no list indices, a self-nesting field once
 * (`documents[0].sections[2].sections[0].title` → `documents.sections.title`).
 */
function argumentName(path: string): string {
  return path
    .replace(/\[\d+\]/g, '')
    .split('.')
    .filter((part, i, parts) => part !== parts[i - 1])
    .join('.');
}

interface Item {
  value: unknown;
  /** Undefined inside a JSON scalar: every object and array there counts towards its depth. */
  type?: GraphQLInputType;
  path: string;
  /** What errors name: the argument path up to the string or JSON scalar at fault. */
  argument?: string;
  /** Levels of JSON inside the nearest JSON scalar. */
  jsonDepth: number;
  /** How many input objects of each type enclose this value (a self-nesting type's depth). */
  nesting: ReadonlyMap<string, number>;
  checkStrings: boolean;
}

/** Throws BAD_USER_INPUT naming the argument) for the first bad value found. */
export function checkInputs(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown> | undefined,
  limits: InputLimits,
): void {
  const { literals, variableUses } = argumentsOf(schema, document, operation);
  // Variables first: they are what graphql-js would coerce recursively.
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType | undefined;
    const value = rawVariables?.[name];
    if (!type || value === undefined) continue; // unknown types and missing values are graphql-js's to report
    const use = variableUses.get(name);
    walk({ value, type, path: use?.path ?? `$${name}`, jsonDepth: 0, nesting: new Map(), checkStrings: !use?.content }, limits);
  }
  for (const literal of literals) walk({ ...literal, jsonDepth: 0, nesting: new Map() }, limits);
}

/** The literal arguments (variables left out) and, per variable, the argument path it feeds. */
function argumentsOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode) {
  const literals: { value: unknown; type: GraphQLInputType; path: string; checkStrings: boolean }[] = [];
  const variableUses = new Map<string, { path: string; content: boolean }>();
  const typeInfo = new TypeInfo(schema);
  const names: string[] = [];
  let content = false;
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  for (const definition of [operation, ...fragments]) {
    visit(
      definition,
      visitWithTypeInfo(typeInfo, {
        Argument: {
          enter(node) {
            const arg = typeInfo.getArgument();
            const field = typeInfo.getFieldDef();
            const parent = typeInfo.getParentType();
            names.push(node.name.value);
            content = Boolean(arg && field && parent && CONTENT_ARGUMENTS.has(`${parent.name}.${field.name}.${arg.name}`));
            // Literals are bounded by MAX_QUERY_TOKENS, so the recursive conversion is safe; variables inside read as undefined.
            if (arg && node.value.kind !== Kind.VARIABLE) {
              literals.push({ value: valueFromASTUntyped(node.value, {}), type: arg.type, path: node.name.value, checkStrings: !content });
            }
          },
          leave() {
            names.pop();
            content = false;
          },
        },
        ObjectField: { enter: (node) => void names.push(node.name.value), leave: () => void names.pop() },
        Variable(node) {
          if (names.length > 0 && !variableUses.has(node.name.value)) variableUses.set(node.name.value, { path: names.join('.'), content });
        },
      }),
    );
  }
  return { literals, variableUses };
}

function walk(root: Item, limits: InputLimits): void {
  const stack: Item[] = [root];
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    const { value, path } = item;
    const argument = item.argument ?? argumentName(path);
    if (value === null || value === undefined) continue;
    let type = item.type;
    if (type && isNonNullType(type)) type = type.ofType;

    if (typeof value === 'string') {
      if (item.checkStrings && (!type || !isEnumType(type))) checkString(value, path, argument);
      continue;
    }
    if (typeof value !== 'object') continue;

    if (type && isListType(type)) {
      const items = Array.isArray(value) ? value : [value]; // graphql-js coerces a single value to a list
      items.forEach((v, i) => stack.push({ ...item, value: v, type: type.ofType, path: `${path}[${i}]` }));
      continue;
    }
    if (type && isInputObjectType(type)) {
      if (Array.isArray(value)) continue; // not an object: coercion refuses it
      const depth = (item.nesting.get(type.name) ?? 0) + 1;
      if (depth > limits.maxSectionDepth) {
        throw inputError(argument, `${argument} nests ${type.name} deeper than ${limits.maxSectionDepth} levels (MAX_SECTION_DEPTH)`);
      }
      const nesting = new Map(item.nesting).set(type.name, depth);
      const fields = type.getFields();
      for (const [name, v] of Object.entries(value)) {
        const field = fields[name];
        if (field) stack.push({ ...item, value: v, type: field.type, path: `${path}.${name}`, nesting });
      }
      continue;
    }
    if (type && isScalarType(type) && !type.name.startsWith('JSON')) continue; // coercion refuses objects for other scalars

    // JSON (a JSON scalar, or inside one): keys and values are strings that reach SQL.
    const jsonDepth = item.jsonDepth + 1;
    if (jsonDepth > limits.maxMetadataDepth) {
      throw inputError(argument, `${argument} is nested deeper than ${limits.maxMetadataDepth} levels (MAX_METADATA_DEPTH)`);
    }
    for (const [key, v] of Object.entries(value)) {
      if (item.checkStrings && !Array.isArray(value)) checkString(key, `a key of ${path}`, argument);
      stack.push({ ...item, value: v, type: undefined, path: Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`, argument, jsonDepth });
    }
  }
}

/** Unicode that PostgreSQL text can store: the check validateRetrieveArgs makes on `question`. */
function checkString(value: string, where: string, argument: string): void {
  const problem = textProblem(value);
  if (problem) throw inputError(argument, `${where} ${problem}`);
}
