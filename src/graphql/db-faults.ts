import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { classifyDatabaseError, type DatabaseFault } from '../store/faults';
import type { Context } from './context';

/** Seconds a client should wait before retrying while the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/**
 * The typed error for a database fault, never the driver's text: SERVICE_UNAVAILABLE (HTTP 503,
 * Retry-After) while the database is unreachable, TIMEOUT for a statement cancelled by
 * STATEMENT_TIMEOUT_MS.
 */
export function databaseFaultError(fault: DatabaseFault, statementTimeoutMs: number, from?: GraphQLError): GraphQLError {
  const placed = { nodes: from?.nodes, path: from?.path };
  if (fault === 'timeout') {
    return new GraphQLError(
      `a database statement ran longer than ${statementTimeoutMs} ms (STATEMENT_TIMEOUT_MS) and was cancelled; ask for less (smaller k1, k2 or pages, a narrower filter)`,
      { ...placed, extensions: { code: 'TIMEOUT' } },
    );
  }
  return new GraphQLError('the database is unavailable; retry shortly', {
    ...placed,
    extensions: {
      code: 'SERVICE_UNAVAILABLE',
      http: { status: 503, headers: new HeaderMap([['retry-after', String(UNAVAILABLE_RETRY_AFTER_S)]]) },
    },
  });
}

/** A database fault thrown while building the context (the API key lookup), as a typed error; anything else unchanged. */
export function contextFault(error: unknown, statementTimeoutMs: number): unknown {
  const fault = classifyDatabaseError(error);
  return fault ? databaseFaultError(fault, statementTimeoutMs) : error;
}

/**
 * Replaces resolver errors caused by a database fault with the typed error before Apollo formats
 * them; Apollo applies the replacement's HTTP status and headers to the response.
 */
export const databaseFaultPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didEncounterErrors({ errors, contextValue }) {
        // Apollo formats this same array after the hook returns, so the errors are replaced in place.
        const list = errors as GraphQLError[];
        list.forEach((error, i) => {
          const fault = classifyDatabaseError(error);
          if (fault) list[i] = databaseFaultError(fault, contextValue.config.statementTimeoutMs, error);
        });
      },
    };
  },
};
