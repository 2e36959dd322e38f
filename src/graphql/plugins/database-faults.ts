import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLError } from 'graphql';
import { currentLogger } from '../../observability/request-scope';
import { storageHealth } from '../../store/storage-health';
import type { Context } from '../context';
import { typedFault } from '../db-faults';

/**
 * Replaces resolver errors caused by a database fault with the typed error before Apollo formats
 * them; Apollo applies the replacement's HTTP status and headers to the response. A mutation that
 * succeeds wrote, so a storage fault seen before is over.
 */
export const databaseFaultPlugin: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    let failed = false;
    return {
      async didEncounterErrors({ errors, contextValue }) {
        failed = true;
        // Apollo formats this same array after the hook returns, so the errors are replaced in place.
        const list = errors as GraphQLError[];
        list.forEach((error, i) => {
          list[i] = typedFault(error, contextValue.db.location, contextValue.config.statementTimeoutMs, error) ?? error;
        });
      },
      async willSendResponse({ operation, contextValue }) {
        if (!failed && operation?.operation === 'mutation' && contextValue.db) storageHealth(contextValue.db).clear(currentLogger());
      },
    };
  },
};
