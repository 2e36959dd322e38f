import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { EncoderError, isQuestionRole, type EncodeResult, type Encoder, type EncoderRole } from './types';

/** What the worker loads the model with (EncoderSetOptions' model fields; declared here: set.ts imports this file). */
export interface BulkThreadOptions {
  cacheDir?: string;
  threads?: number;
  queryThreads?: number;
}

/**
 * An encoder whose corpus work (documents, passages) runs in a worker thread, while questions,
 * token counts and budgets stay with the model loaded on the main thread. onnxruntime-node's run()
 * blocks the thread that calls it, so a server embedding on its main thread answers nothing while a
 * batch runs: a retrieve during the demo's first-start embedding waited for every batch in its way
 * (issue 32 §1). The worker loads the same model files (checked: same checksum) with the bulk
 * thread count; the main thread's copy serves questions with its own (one) thread.
 */
export class BulkThreadEncoder implements Encoder {
  readonly runtime = 'onnxruntime-node' as const;
  private worker?: Promise<Worker>;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (r: EncodeResult) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly inner: Encoder,
    readonly source: string,
    private readonly options: BulkThreadOptions,
  ) {}

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
    const worker = await this.start();
    const id = this.next++;
    return new Promise<EncodeResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, texts: [...texts], role, batchSize: options?.batchSize });
    });
  }

  /** The worker, started on the first corpus batch (a server that never embeds starts none). */
  private start(): Promise<Worker> {
    this.worker ??= new Promise<Worker>((resolve, reject) => {
      const worker = startWorker({ source: this.source, options: this.options });
      worker.once('message', (m: { loaded: boolean; checksum?: string; error?: string }) => {
        if (!m.loaded) return reject(new EncoderError(this.name, `the corpus encoder thread could not load it: ${m.error}`));
        if (m.checksum !== this.checksum) {
          void worker.terminate();
          return reject(new EncoderError(this.name, `${this.source} changed on disk since the server loaded it (checksum differs in the corpus encoder thread)`));
        }
        worker.on('message', (r: { id: number; vectors?: Float32Array[]; stats?: EncodeResult['stats']; error?: string }) => {
          const w = this.waiting.get(r.id);
          if (!w) return;
          this.waiting.delete(r.id);
          if (r.error !== undefined) w.reject(new EncoderError(this.name, r.error));
          else w.resolve({ vectors: r.vectors!, stats: r.stats! });
        });
        resolve(worker);
      });
      const fail = (error: Error) => {
        reject(error);
        for (const w of this.waiting.values()) w.reject(new EncoderError(this.name, `the corpus encoder thread stopped: ${error.message}`));
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
    await Promise.all([worker?.then((w) => w.terminate(), () => undefined), this.inner.close()]);
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
