import { DomainError } from '../errors';
import { ANSWER_CUT } from './remote';

/**
 * Repeating a call to a server that is not answering for a moment (`dhr … --url` while the server
 * restarts, or a proxy in front of it says it is unavailable), with backoff, for a bounded time.
 */

/** Connection failures (the code remoteGraphQL keeps in details.transport) that a restarting server gives. */
const TRANSIENT_TRANSPORT = new Set([
  'ECONNREFUSED', // nothing listens: the server is stopped or not started yet
  'ECONNRESET', // the server went while the request was on its way
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN', // a name lookup that failed for now
  'UND_ERR_SOCKET', // undici: the other side closed the connection
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  ANSWER_CUT, // the answer stopped half-way
]);
/** HTTP answers that say "not now": the server's own 503s (OVERLOADED, SERVICE_UNAVAILABLE, TIMEOUT), a proxy's 502/504. */
const TRANSIENT_STATUS = new Set([502, 503, 504]);

/** Whether a failed remote call may succeed when sent again shortly. */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof DomainError)) return false;
  const { transport, httpStatus } = error.details ?? {};
  return (typeof transport === 'string' && TRANSIENT_TRANSPORT.has(transport)) || (typeof httpStatus === 'number' && TRANSIENT_STATUS.has(httpStatus));
}

export interface RetryPolicy {
  /** How long to keep trying from the first failure; 0: never retry. */
  forMs: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** The pause between tries (a caller's may end early, on Ctrl-C). */
  wait?: (ms: number) => Promise<void>;
  /** Stop retrying (Ctrl-C): the last failure is thrown. */
  stopped?: () => boolean;
  /** The first failure of a run of them, and the try that succeeded after it. */
  onDown?: (error: DomainError) => void;
  onBack?: (downMs: number) => void;
}

/** The last transient failure once the policy's time is spent: details.gaveUpAfterMs says how long it was tried. */
export class GaveUp extends DomainError {
  constructor(
    readonly last: DomainError,
    readonly afterMs: number,
  ) {
    super(last.code, last.message, { argument: last.argument, details: { ...last.details, gaveUpAfterMs: afterMs } });
    this.name = 'GaveUp';
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call`, and again after each transient failure, waiting 0.25 s, then twice as long each
 * time up to 4 s, until it succeeds or `forMs` has passed since the first failure (then GaveUp).
 * Any other failure is thrown at once.
 */
export async function withRetry<T>(call: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const wait = policy.wait ?? sleep;
  let downSince: number | undefined;
  let delay = policy.firstDelayMs ?? 250;
  for (;;) {
    try {
      const value = await call();
      if (downSince !== undefined) policy.onBack?.(Date.now() - downSince);
      return value;
    } catch (error) {
      if (!isTransient(error)) throw error;
      const failure = error as DomainError;
      if (downSince === undefined) {
        downSince = Date.now();
        if (policy.forMs > 0) policy.onDown?.(failure);
      }
      const elapsed = Date.now() - downSince;
      if (elapsed >= policy.forMs || policy.stopped?.()) throw new GaveUp(failure, elapsed);
      await wait(Math.min(delay, policy.forMs - elapsed));
      if (policy.stopped?.()) throw new GaveUp(failure, Date.now() - downSince);
      delay = Math.min(delay * 2, policy.maxDelayMs ?? 4000);
    }
  }
}
