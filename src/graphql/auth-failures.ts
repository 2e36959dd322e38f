import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config';
import { rateLimited, type DomainError } from '../errors';

/**
 * Failed authentications (a key that is unknown, revoked or malformed) per client address: at
 * most RATE_LIMIT_AUTH_FAILURES per RATE_LIMIT_WINDOW_S. Past that, each further wrong key from
 * the address is refused with RATE_LIMITED (429, Retry-After) rather than UNAUTHENTICATED, and
 * still counted. A valid key is never refused here: behind a proxy or NAT many clients share one
 * address, and one of them guessing must not lock the others out. A success does not reset the
 * count either, so a caller holding one valid key cannot clear its record of guesses with it.
 */
export interface AuthFailureLimit {
  /** Counts one failed authentication from the address; the refusal when it is past its budget. */
  failed(address: string): Promise<DomainError | undefined>;
}

export function authFailureLimit(config: Pick<Config, 'rateLimitAuthFailures' | 'rateLimitWindowS'>): AuthFailureLimit {
  const points = config.rateLimitAuthFailures;
  if (points <= 0) return { failed: async () => undefined };
  const limiter = new RateLimiterMemory({ points, duration: config.rateLimitWindowS, keyPrefix: 'auth' });
  return {
    async failed(address) {
      // Past the budget consume() rejects with the limiter's state; that state is the answer.
      const used = await limiter.consume(address).catch((error: unknown) => {
        if (error instanceof RateLimiterRes) return error;
        throw error;
      });
      if (used.consumedPoints <= points) return undefined;
      return rateLimited(
        used.msBeforeNext,
        (retryAfter) =>
          `too many failed authentications from this address: the limit is ${points} per ${config.rateLimitWindowS} s (RATE_LIMIT_AUTH_FAILURES); retry in ${retryAfter} s`,
      );
    },
  };
}
