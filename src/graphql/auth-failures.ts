import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { DomainError, ErrorCode } from '../errors';

/**
 * Failed authentications (a key that is unknown, revoked or malformed) per client address: at
 * most RATE_LIMIT_AUTH_FAILURES per RATE_LIMIT_WINDOW_S. Past that, requests from the address
 * that carry a key are refused (RATE_LIMITED, 429, Retry-After) before the key is looked up, so
 * guessing keys costs a window per few tries. A success does not reset the count: a caller
 * holding one valid key could otherwise keep guessing others.
 */
export interface AuthFailureLimit {
  /** The refusal for an address over its budget, or undefined. */
  refusal(address: string): Promise<DomainError | undefined>;
  /** Counts one failed authentication from the address. */
  failed(address: string): Promise<void>;
}

export function authFailureLimit(config: Pick<Config, 'rateLimitAuthFailures' | 'rateLimitWindowS'>): AuthFailureLimit {
  const points = config.rateLimitAuthFailures;
  if (points <= 0) return { refusal: async () => undefined, failed: async () => undefined };
  const limiter = new RateLimiterMemory({ points, duration: config.rateLimitWindowS, keyPrefix: 'auth' });
  return {
    async refusal(address) {
      const used = await limiter.get(address);
      if (!used || used.consumedPoints < points) return undefined;
      const retryAfter = Math.max(1, Math.ceil(used.msBeforeNext / 1000));
      return new DomainError(
        ErrorCode.RATE_LIMITED,
        `too many failed authentications from this address: the limit is ${points} per ${config.rateLimitWindowS} s (RATE_LIMIT_AUTH_FAILURES); retry in ${retryAfter} s`,
        { details: { retryAfterSeconds: retryAfter } },
      );
    },
    async failed(address) {
      // Past the budget consume() rejects with the limiter's state; the count is what matters here.
      await limiter.consume(address).catch((error: unknown) => {
        if (!(error instanceof RateLimiterRes)) throw error;
      });
    },
  };
}
