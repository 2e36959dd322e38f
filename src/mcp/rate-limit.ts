import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { rateLimited, type DomainError } from '../errors';

/** Who a call counts against: the API key, else the client address (as GraphQL's rate limits). */
export type Caller = { keyId: number } | { address: string };

export type ToolRateLimit = (caller: Caller, write: boolean) => Promise<DomainError | undefined>;

/**
 * Tool calls over HTTP, limited as GraphQL operations are: reading tools against
 * RATE_LIMIT_QUERIES, writing ones (ingest) against RATE_LIMIT_MUTATIONS, per RATE_LIMIT_WINDOW_S,
 * per key or client address; in memory, per process, a budget of their own beside GraphQL's.
 */
export function toolRateLimit(config: Pick<Config, 'rateLimitQueries' | 'rateLimitMutations' | 'rateLimitWindowS'>): ToolRateLimit {
  const limiter = (points: number, keyPrefix: string, setting: string) =>
    points > 0 ? { limiter: new RateLimiterMemory({ points, duration: config.rateLimitWindowS, keyPrefix }), setting } : undefined;
  const reads = limiter(config.rateLimitQueries, 'mcp-q', 'RATE_LIMIT_QUERIES');
  const writes = limiter(config.rateLimitMutations, 'mcp-m', 'RATE_LIMIT_MUTATIONS');
  return async (caller, write) => {
    const budget = write ? writes : reads;
    if (!budget) return undefined;
    try {
      await budget.limiter.consume('keyId' in caller ? `key:${caller.keyId}` : `address:${caller.address}`);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      return rateLimited(
        error.msBeforeNext,
        (retryAfter) =>
          `too many ${write ? 'writing' : 'reading'} tool calls: the limit is ${budget.limiter.points} per ${config.rateLimitWindowS} s (${budget.setting}); retry in ${retryAfter} s`,
      );
    }
  };
}
