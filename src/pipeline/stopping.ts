/**
 * The process is stopping (`dhr serve` got SIGTERM or SIGINT): long work that has no signal of its
 * own, like the embed stage of an ingest mutation still running after its request was drained,
 * stops between batches once this is set. Shutdown then waits for the batches in flight before it
 * closes the models and the database (a batch is encoded and written whole, never cut).
 */
const controller = new AbortController();
const inFlight = new Set<Promise<unknown>>();

/** Aborted once the process has begun to shut down. */
export const processStopping: AbortSignal = controller.signal;

export function stopProcessWork(): void {
  controller.abort();
}

/** Runs one batch that shutdown must wait for (encode and write). */
export function inFlightBatch<T>(batch: Promise<T>): Promise<T> {
  inFlight.add(batch);
  const forget = () => inFlight.delete(batch);
  batch.then(forget, forget);
  return batch;
}

/** Resolves once no batch is in flight (batches started meanwhile included). */
export async function batchesSettled(): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
}
