import type { ApolloServerPlugin } from '@apollo/server';
import { DomainError, ErrorCode } from '../../errors';
import { httpStatusOf, originalOf } from '../errors';

/**
 * Gives the response the HTTP status of its domain errors (401, 403, 400 for limits): errors
 * thrown in resolvers or in plugins reach Apollo without `extensions.http`.
 */
export const errorStatus: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async willSendResponse({ errors, response }) {
        for (const error of errors ?? []) {
          const original = originalOf(error);
          const status = original instanceof DomainError ? httpStatusOf(original.code) : undefined;
          if (status) {
            response.http.status = status;
            // A full question queue drains in milliseconds: the client may retry at once.
            if (original instanceof DomainError && original.code === ErrorCode.OVERLOADED) response.http.headers.set('retry-after', '1');
            return;
          }
        }
      },
    };
  },
};
