/**
 * Requests in flight in this process, so background work (the embedding `dhr serve` does at first
 * start) gives them the thread. PGlite's SQL and onnxruntime-node's runs are synchronous on the main
 * thread (onnxruntime-node's run() is a setImmediate around a blocking call), so a background batch
 * that starts while a request is being answered delays every step of that request by the batch's
 * whole length: a retrieve took seconds while the demo corpus embedded.
 */
let active = 0;
let lastActive = 0;
let waiters: (() => void)[] = [];

/** Counts a request from its start; call the returned function once it is answered (idempotent). */
export function requestStarted(): () => void {
  active++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    active--;
    lastActive = performance.now();
    if (active === 0) {
      const wake = waiters;
      waiters = [];
      for (const w of wake) w();
    }
  };
}

/** Requests in flight now. */
export function requestsInFlight(): number {
  return active;
}

export interface YieldOptions {
  /** Longest wait for the requests in flight: background work goes on at least one batch this often under constant load. */
  maxWaitMs: number;
  /** Quiet this long after the last request: a client's next question (keep-alive, a page's several fetches) comes within it. */
  graceMs: number;
}

export const DEFAULT_YIELD: YieldOptions = { maxWaitMs: 500, graceMs: 10 };

/**
 * Awaited by background work before each batch: lets the event loop turn (a request that arrived
 * during the last batch is read), then waits while requests are in flight, for at most
 * `maxWaitMs` in all.
 */
export async function yieldToRequests(options: YieldOptions = DEFAULT_YIELD): Promise<void> {
  const deadline = performance.now() + options.maxWaitMs;
  await new Promise<void>((resolve) => setImmediate(resolve));
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return;
    if (active > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(wake, left);
        function wake() {
          clearTimeout(timer);
          resolve();
        }
        waiters.push(wake);
      });
      continue;
    }
    const quietFor = performance.now() - lastActive;
    if (quietFor >= options.graceMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, Math.min(options.graceMs - quietFor, left)));
  }
}
