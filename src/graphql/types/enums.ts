import { enumSpelling } from '../enum-spelling';
import { registerEnumType } from 'type-graphql';

/**
 * A GraphQL enum over a domain's own list of values (JOB_SCOPES, ENCODER_ROLES, …): the names
 * are the values in UPPER_SNAKE case, and the TypeScript type stays the domain's union, so
 * resolvers pass values through without a second enum or a cast.
 */
export function graphqlEnum<T extends string>(values: readonly T[], config: { name: string; description?: string }): Record<string, T> {
  const enumObject: Record<string, T> = {};
  for (const value of values) enumObject[enumSpelling(value)] = value;
  registerEnumType(enumObject, config);
  return enumObject;
}
