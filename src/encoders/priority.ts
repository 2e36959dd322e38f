import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether the corpus encoding running now is background work: the embedding `dhr serve` does
 * while it answers (first start, what an interrupted ingest left) and the job workers' batches.
 * BulkThreadEncoder sends it to its thread of lower priority, where it waits while the cores are
 * busy with requests. Anything not marked — an ingest that a client's request waits for — goes
 * to a corpus thread at the process's own priority: at nice 10 beside readers that kept the cores
 * busy, a 5-document ingest took many times its time alone (bench:writer-fairness).
 * One storage for the process (connection-share.ts says why not more).
 */
const background = new AsyncLocalStorage<true>();

/** Runs `fn` with its corpus encoding marked as background work. */
export function inBackground<T>(fn: () => Promise<T>): Promise<T> {
  return background.run(true, fn);
}

export function isBackground(): boolean {
  return background.getStore() === true;
}
