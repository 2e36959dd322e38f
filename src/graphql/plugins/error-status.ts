import type { ApolloServerPlugin } from '@apollo/server';
import { DomainError } from '../../errors';
import { httpExtension, originalOf } from '../errors';

/**
 * Gives the response the HTTP status and Retry-After of its domain errors (401, 403, 503 for a
 * full question queue), from REFUSALS (src/errors.ts): errors thrown in resolvers or in plugins
 * reach Apollo without `extensions.http`. Only a status that holds anywhere: a resolver's
 * BAD_USER_INPUT or TIMEOUT is a field error, beside the data.
 */
export const errorStatus: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async willSendResponse({ errors, response }) {
        for (const error of errors ?? []) {
          const original = originalOf(error);
          const http = original instanceof DomainError ? httpExtension(original.code, original.details, false) : undefined;
          if (http) {
            response.http.status = http.status;
            for (const [name, value] of http.headers ?? []) response.http.headers.set(name, value);
            return;
          }
        }
      },
    };
  },
};
