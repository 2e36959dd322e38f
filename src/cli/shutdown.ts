import { messageOf } from '../errors';
import { batchesSettled, stopProcessWork } from '../pipeline/stopping';

/**
 * Past SHUTDOWN_GRACE_MS, what closing may still take (an embedding batch begun just before the
 * grace ended, closing the models and the database) before the exit is forced.
 */
export const CLOSE_MARGIN_MS = 10_000;

type Step = () => Promise<unknown>;

/**
 * `dhr serve`'s shutdown (docs/operations.md#shutdown), listening from before anything is opened.
 * On the first SIGTERM or SIGINT: long work stops between batches, the steps registered with
 * `stop` run together (draining requests, job workers, background embedding), then those with
 * `close` one by one, last opened first (the database, which releases the data folder's lock,
 * closes last); exit 0. Bounded: SHUTDOWN_GRACE_MS + CLOSE_MARGIN_MS after the signal the process
 * exits 1 whatever still runs. A second signal exits 1 at once.
 */
export class ServeShutdown {
  private signal?: string;
  private readonly stops: Step[] = [];
  private readonly closes: Step[] = [];
  /** The startup step in progress that opens something: shutdown waits for it, then closes what it opened. */
  private opening: Promise<unknown> = Promise.resolve();

  private readonly log: (message: string) => void;
  private readonly exit: (code: number) => void;
  /** Where signals (and beforeExit) come from: the process, or a stand-in in tests. */
  private readonly events: NodeJS.EventEmitter;
  private readonly marginMs: number;

  constructor(
    private readonly graceMs: number,
    options: { log?: (message: string) => void; exit?: (code: number) => void; events?: NodeJS.EventEmitter; marginMs?: number } = {},
  ) {
    this.log = options.log ?? ((m) => console.error(m));
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.events = options.events ?? process;
    this.marginMs = options.marginMs ?? CLOSE_MARGIN_MS;
    this.events.on('SIGINT', () => this.begin('SIGINT'));
    this.events.on('SIGTERM', () => this.begin('SIGTERM'));
  }

  get stopping(): boolean {
    return this.signal !== undefined;
  }

  /**
   * A startup step that opens something (the database, the models, the HTTP server): a signal
   * meanwhile waits for it, then stops and closes what it opened. Once stopping, startup goes no
   * further (the returned promise never settles; shutdown exits the process).
   */
  async open<T>(work: Promise<T>, on: { stop?: (value: T) => Promise<unknown>; close?: (value: T) => Promise<unknown> } = {}): Promise<T> {
    const registered = work.then((value) => {
      if (on.stop) this.stops.push(() => on.stop!(value));
      if (on.close) this.closes.push(() => on.close!(value));
    });
    this.opening = registered.catch(() => undefined);
    return this.cut(registered.then(() => work));
  }

  /** Work already running (background embedding) that shutdown waits for, together with the other stops. */
  onStop(step: Step): void {
    this.stops.push(step);
  }

  /**
   * A long startup step on the database (the demo corpus, indexing what an ingest left): a signal
   * does not wait for it; closing the database cuts it between transactions (what committed
   * stays, recorded as pending where unfinished). Once stopping, its end or failure goes no further.
   */
  async cut<T>(work: Promise<T>): Promise<T> {
    try {
      const value = await work;
      return this.stopping ? parked<T>() : value;
    } catch (error) {
      if (this.stopping) return parked<T>();
      throw error;
    }
  }

  private begin(signal: string): void {
    if (this.signal) {
      this.log(`${signal} again: exiting without waiting`);
      this.exit(1);
      return;
    }
    this.signal = signal;
    const limit = this.graceMs + this.marginMs;
    this.log(`${signal}: shutting down (in-flight requests get up to ${this.graceMs} ms; the exit is forced after ${limit} ms)`);
    stopProcessWork();
    // Unref'd: a shutdown that completes exits at once. Fires only when the event loop turns,
    // which PGlite statements allow every few milliseconds (store/loop-turn.ts).
    setTimeout(() => {
      this.log(`shutdown: not done after ${limit} ms (SHUTDOWN_GRACE_MS + ${this.marginMs} ms): exiting with work unfinished`);
      this.exit(1);
    }, limit).unref();
    // A wait that can never end (nothing left to wake it) would otherwise end the process quietly with code 0.
    this.events.once('beforeExit', () => {
      this.log('shutdown: stopped waiting with work unfinished');
      this.exit(1);
    });
    void this.run().then((failed) => {
      this.log(failed ? 'stopped, with errors' : 'stopped');
      this.exit(failed ? 1 : 0);
    });
  }

  /** Stops, then closes; true when a step failed (each step still runs). */
  private async run(): Promise<boolean> {
    let failed = false;
    const attempt = async (step: Step) => {
      try {
        await step();
      } catch (error) {
        failed = true;
        this.log(`shutdown: ${messageOf(error)}`);
      }
    };
    await this.opening;
    await Promise.all(this.stops.map(attempt));
    // Embedding batches that had no signal of their own (an ingest mutation past its request's
    // grace) stopped starting new ones at the signal; the one in flight is written whole.
    await attempt(batchesSettled);
    for (const close of [...this.closes].reverse()) await attempt(close);
    return failed;
  }
}

function parked<T>(): Promise<T> {
  return new Promise<T>(() => undefined);
}
