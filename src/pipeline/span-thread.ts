import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_NICE } from '../encoders/bulk-thread';
import { isBackground } from '../encoders/priority';
import type { StoredSpans } from '../store/sentence-embeddings';

/**
 * Typed spans of an embedding batch's sentences, tagged in a worker thread (span-worker.ts) when the
 * server's encoder runs its corpus batches in threads (BulkThreadEncoder). Tagging costs milliseconds
 * a sentence and yields to the event loop between passages; on the main thread, beside readers whose
 * requests fill every turn of the loop, each of those yields waited for them: a 5-document ingest's
 * 30 passages took 1.5 s to tag instead of 0.25 s, the longest step of the ingest
 * (bench:writer-fairness). In a thread it runs beside the sentences' encoding, as before, and the
 * readers' thread is spared it. Two threads, as the encoder's: background work at nice 10, the rest
 * (an ingest a request waits for) at the process's priority; each started on first use, and holding
 * the process open only while it has work.
 */
const threads = new Map<number, SpanThread>();

export function tagSpansInThread(passages: readonly (readonly string[])[]): Promise<StoredSpans[]> {
  const nice = isBackground() ? BACKGROUND_NICE : 0;
  let thread = threads.get(nice);
  if (!thread) threads.set(nice, (thread = new SpanThread(nice)));
  return thread.tag(passages);
}

/** Stops the threads (tests; a server's exit ends them anyway). */
export async function closeSpanThreads(): Promise<void> {
  const all = [...threads.values()];
  threads.clear();
  await Promise.all(all.map((t) => t.close()));
}

class SpanThread {
  private worker?: Worker;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (s: StoredSpans[]) => void; reject: (e: Error) => void }>();

  constructor(private readonly nice: number) {}

  tag(passages: readonly (readonly string[])[]): Promise<StoredSpans[]> {
    const worker = this.start();
    const id = this.next++;
    return new Promise<StoredSpans[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage({ id, passages: passages.map((p) => [...p]) });
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = startWorker({ nice: this.nice });
    worker.unref();
    worker.on('message', (r: { id: number; spans?: StoredSpans[]; error?: string }) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.settled(r.id);
      if (r.error !== undefined) w.reject(new Error(`tagging sentences: ${r.error}`));
      else w.resolve(r.spans!);
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const w of this.waiting.values()) w.reject(new Error(`the sentence tagging thread stopped: ${error.message}`));
      this.waiting.clear();
    };
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`exit code ${code}`)));
    return (this.worker = worker);
  }

  private settled(id: number): void {
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker?.unref();
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}

/** The compiled worker next to this file, or from sources its TypeScript behind tsx (as bulk-thread.ts's startWorker). */
function startWorker(workerData: unknown): Worker {
  const js = join(__dirname, 'span-worker.js');
  if (existsSync(js)) return new Worker(js, { workerData });
  const ts = join(__dirname, 'span-worker.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(ts)});`, { eval: true, workerData });
}
