import { setImmediate } from 'node:timers';

/** The longest stretch of PGlite statements run without letting the event loop turn. */
export const LOOP_TURN_MS = 20;

let lastTurn = performance.now();

/**
 * PGlite runs SQL synchronously (WASM on this thread) behind promises that settle at once, so a
 * long run of statements (an ingest's writes, indexing at start) is one chain of microtasks: no
 * signal handler runs and no timer fires until it ends. SIGTERM went unanswered for minutes, and
 * the data folder's lock, refreshed by a timer, went stale. Awaited before each statement: lets the
 * loop turn once (timers, I/O, signals) when LOOP_TURN_MS have passed since the last time.
 */
export async function letLoopTurn(): Promise<void> {
  if (performance.now() - lastTurn < LOOP_TURN_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  lastTurn = performance.now();
}
