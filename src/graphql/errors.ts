import { GraphQLError } from 'graphql';

/** Typed API errors: clients branch on extensions.code, people read the message. */
export function badUserInput(message: string, argument?: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(argument ? { argument } : {}) } });
}

export function notFound(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'NOT_FOUND' } });
}
