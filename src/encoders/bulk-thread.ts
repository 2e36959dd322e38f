import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { isBackground } from './priority';
import { EncoderError, isQuestionRole, type EncodeResult, type Encoder, type EncoderRole } from './types';

/** What the worker loads the model with (EncoderSetOptions' model fields; declared here: set.ts imports this file). */
export interface BulkThreadOptions {
  cacheDir?: string;
  threads?: number;
  queryThreads?: number;
}

/** A corpus thread's nice value for background work (priority.ts): below the requests' thread. */
export const BACKGROUND_NICE = 10;

/**
 * An encoder whose corpus work (documents, passages) runs in a worker thread, while questions,
 * token counts and budgets stay with the model loaded on the main thread. onnxruntime-node's run()
 * blocks the thread that calls it, so a server embedding on its main thread answers nothing while a
 * batch runs: a retrieve during the demo's first-start embedding waited for every batch in its way
 * (bench:responsive). Two such threads, each started on its first batch: background work (priority.ts)
 * at nice 10, so it yields the cores to requests, and the rest — an ingest a request waits for —
 * at the process's priority, so readers that keep the cores busy do not starve it. Each loads the
 * same model files (checked: same checksum) with the bulk thread count; the main thread's copy
 * serves questions with its own (one) thread.
 */
export class BulkThreadEncoder implements Encoder {
  readonly runtime = 'onnxruntime-node' as const;
  private readonly threads: Record<'foreground' | 'background', CorpusThread>;

  constructor(
    private readonly inner: Encoder,
    readonly source: string,
    options: BulkThreadOptions,
  ) {
    this.threads = {
      foreground: new CorpusThread(inner, source, options, 0),
      background: new CorpusThread(inner, source, options, BACKGROUND_NICE),
    };
  }

  get name() {
    return this.inner.name;
  }
  get dimension() {
    return this.inner.dimension;
  }
  get checksum() {
    return this.inner.checksum;
  }
  get normalized() {
    return this.inner.normalized;
  }
  maxTokens(role: EncoderRole) {
    return this.inner.maxTokens(role);
  }
  countTokens(text: string, role: EncoderRole) {
    return this.inner.countTokens(text, role);
  }

  async encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult> {
    if (isQuestionRole(role) || texts.length === 0) return this.inner.encode(texts, role, options);
    return this.threads[isBackground() ? 'background' : 'foreground'].encode(texts, role, options);
  }

  /** Which corpus threads have started (tests). */
  started(): { foreground: boolean; background: boolean } {
    return { foreground: this.threads.foreground.started, background: this.threads.background.started };
  }

  async close(): Promise<void> {
    await Promise.all([this.threads.foreground.close(), this.threads.background.close(), this.inner.close()]);
  }
}

/** One worker thread of a BulkThreadEncoder, at one nice value. */
class CorpusThread {
  private worker?: Promise<Worker>;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (r: EncodeResult) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly inner: Encoder,
    private readonly source: string,
    private readonly options: BulkThreadOptions,
    private readonly nice: number,
  ) {}

  get started(): boolean {
    return this.worker !== undefined;
  }

  async encode(texts: readonly string[], role: EncoderRole, options?: { batchSize?: number }): Promise<EncodeResult> {
    const worker = await this.start();
    const id = this.next++;
    return new Promise<EncodeResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, texts: [...texts], role, batchSize: options?.batchSize });
    });
  }

  /** The worker, started on the first corpus batch (a server that never embeds starts none). */
  private start(): Promise<Worker> {
    const name = this.inner.name;
    this.worker ??= new Promise<Worker>((resolve, reject) => {
      const worker = startWorker({ source: this.source, options: this.options, nice: this.nice });
      worker.once('message', (m: { loaded: boolean; checksum?: string; error?: string }) => {
        if (!m.loaded) return reject(new EncoderError(name, `the corpus encoder thread could not load it: ${m.error}`));
        if (m.checksum !== this.inner.checksum) {
          void worker.terminate();
          return reject(new EncoderError(name, `${this.source} changed on disk since the server loaded it (checksum differs in the corpus encoder thread)`));
        }
        worker.on('message', (r: { id: number; vectors?: Float32Array[]; stats?: EncodeResult['stats']; error?: string }) => {
          const w = this.waiting.get(r.id);
          if (!w) return;
          this.waiting.delete(r.id);
          if (r.error !== undefined) w.reject(new EncoderError(name, r.error));
          else w.resolve({ vectors: r.vectors!, stats: r.stats! });
        });
        resolve(worker);
      });
      const fail = (error: Error) => {
        reject(error);
        for (const w of this.waiting.values()) w.reject(new EncoderError(name, `the corpus encoder thread stopped: ${error.message}`));
        this.waiting.clear();
        this.worker = undefined;
      };
      worker.once('error', fail);
      worker.once('exit', (code) => code !== 0 && fail(new Error(`exit code ${code}`)));
    });
    return this.worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.then(
      (w) => w.terminate(),
      () => undefined,
    );
  }
}

/**
 * The compiled worker next to this file; running from sources (tsx, whose loader a worker does not
 * inherit on Node 20), its TypeScript source behind tsx's CommonJS hook.
 */
function startWorker(workerData: unknown): Worker {
  const js = join(__dirname, 'bulk-worker.js');
  if (existsSync(js)) return new Worker(js, { workerData });
  const ts = join(__dirname, 'bulk-worker.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(ts)});`, { eval: true, workerData });
}
