import { PoolBusyError } from './busy-pool';

/**
 * Admission for search statements: at most `limit` run at once, the others wait in order. A search
 * is CPU-bound in PostgreSQL, so readers beyond the database's cores only queue there, holding a
 * connection each; beside 8 readers on a pool of 4 a small ingest's every statement waited for a
 * connection behind theirs (400 ms of a 5-document ingest, bench:writer-fairness). Gated here, the
 * waiting readers hold none, and the rest of the pool stays free for writes. A search that waits
 * longer than `waitMs` is refused as a pool wait would be (PoolBusyError: OVERLOADED).
 */
export class SearchGate {
  private running = 0;
  private readonly queue: { start: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(
    readonly limit: number,
    private readonly waitMs: number,
  ) {}

  /** Searches waiting for their turn now. */
  get waiting(): number {
    return this.queue.length;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await this.turn();
    else this.running++;
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Resolves once a running search hands its place over (running stays counted for this one). */
  private turn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry = {
        start: () => {
          clearTimeout(entry.timer);
          resolve();
        },
        timer: setTimeout(() => {
          this.queue.splice(this.queue.indexOf(entry), 1);
          reject(
            new PoolBusyError(
              `the server is busy: ${this.limit} searches (the most at once: half of DB_POOL_MAX) stayed running while this one waited ${this.waitMs} ms; retry shortly`,
            ),
          );
        }, this.waitMs),
      };
      this.queue.push(entry);
    });
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next.start();
    else this.running--;
  }
}

/** Searches at once for a pool of `poolMax`: half of it, so as many connections stay for writes (and at least one search). */
export function defaultSearchLimit(poolMax: number): number {
  return Math.max(1, Math.floor(poolMax / 2));
}
