import type { ApolloServerPlugin } from '@apollo/server';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../../config';
import { rateLimited } from '../../errors';
import type { Context } from '../context';
import { domainRefusal } from '../errors';

/**
 * The client address of an HTTP request, kept on its context (requests that did not come over
 * HTTP have none and are not limited). A symbol property, because Apollo clones the context per
 * operation (enumerable own properties survive the clone).
 */
const CLIENT_ADDRESS = Symbol('client address');

export function attachClientAddress(context: Context, address: string): Context {
  (context as Context & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS] = address;
  return context;
}

/**
 * Rate limits per API key, or per client address for requests without a key: queries
 * (retrieval included) and mutations count against separate budgets of RATE_LIMIT_QUERIES and
 * RATE_LIMIT_MUTATIONS per RATE_LIMIT_WINDOW_S. Counted once the operation is known, before it
 * runs; over the budget → RATE_LIMITED, HTTP 429 with Retry-After. In memory: per process.
 */
export function rateLimitPlugin(config: Pick<Config, 'rateLimitQueries' | 'rateLimitMutations' | 'rateLimitWindowS'>): ApolloServerPlugin<Context> {
  const limiter = (points: number, keyPrefix: string) =>
    points > 0 ? new RateLimiterMemory({ points, duration: config.rateLimitWindowS, keyPrefix }) : undefined;
  const budgets = {
    query: { limiter: limiter(config.rateLimitQueries, 'q'), setting: 'RATE_LIMIT_QUERIES' },
    mutation: { limiter: limiter(config.rateLimitMutations, 'm'), setting: 'RATE_LIMIT_MUTATIONS' },
  };
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue, operation }) {
          const address = (contextValue as Context & { [CLIENT_ADDRESS]?: string })[CLIENT_ADDRESS];
          if (address === undefined || !operation) return;
          const budget = operation.operation === 'mutation' ? budgets.mutation : budgets.query;
          if (!budget.limiter) return;
          const who = contextValue.principal ? `key:${contextValue.principal.keyId}` : `address:${address}`;
          try {
            await budget.limiter.consume(who);
          } catch (error) {
            if (!(error instanceof RateLimiterRes)) throw error;
            const kind = operation.operation === 'mutation' ? 'mutations' : 'queries';
            const points = budget.limiter.points;
            throw domainRefusal(
              rateLimited(
                error.msBeforeNext,
                (retryAfter) => `too many ${kind}: the limit is ${points} per ${config.rateLimitWindowS} s (${budget.setting}); retry in ${retryAfter} s`,
              ),
            );
          }
        },
      };
    },
  };
}
