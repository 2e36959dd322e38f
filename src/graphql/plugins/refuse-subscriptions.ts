import type { ApolloServerPlugin } from '@apollo/server';
import { DomainError, ErrorCode } from '../../errors';

/**
 * The schema has no Subscription type and the server no transport for one, so graphql-js would
 * fail a `subscription { … }` at execution with an error that has no code (read as internal).
 * Refused here instead, once the operation is chosen: BAD_REQUEST, HTTP 400.
 */
export const refuseSubscriptions: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation }) {
        if (operation?.operation === 'subscription') {
          throw new DomainError(ErrorCode.BAD_REQUEST, 'subscriptions are not supported: this API answers queries and mutations over HTTP');
        }
      },
    };
  },
};
