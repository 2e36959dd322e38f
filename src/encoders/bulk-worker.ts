/**
 * The worker thread of BulkThreadEncoder (bulk-thread.ts): loads one model and encodes corpus
 * batches (documents, passages) off the main thread. Messages: { load } once, then { id, texts,
 * role, batchSize }; answers { id, vectors, stats } or { id, error }.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { loadEncoder, type EncoderSetOptions } from './set';
import type { EncoderRole } from './types';

interface Request {
  id: number;
  texts: string[];
  role: EncoderRole;
  batchSize?: number;
}

const { source, options, nice } = workerData as { source: string; options: EncoderSetOptions; nice: number };
/**
 * The thread's nice value (BulkThreadEncoder's choice: 0 for an ingest a request waits for, 10 for
 * background work, below the main thread, so when the cores are contended the requests' thread
 * runs first and the corpus waits). On Linux a thread's own value (setpriority on the calling
 * thread; onnxruntime's pool threads, created later, inherit it).
 */
if (nice !== 0) {
  try {
    setPriority(0, nice);
  } catch {
    // Not permitted or not supported here: the thread keeps the process's priority.
  }
}

const port = parentPort!;
// One session here: questions never come to this thread.
const encoder = loadEncoder(source, { ...options, queryThreads: options.threads ?? 0, bulkThread: false });
encoder.then(
  (e) => port.postMessage({ loaded: true, checksum: e.checksum }),
  (error: unknown) => port.postMessage({ loaded: false, error: (error as Error).message }),
);

port.on('message', (request: Request) => {
  void (async () => {
    try {
      const { vectors, stats } = await (await encoder).encode(request.texts, request.role, { batchSize: request.batchSize });
      port.postMessage({ id: request.id, vectors, stats });
    } catch (error) {
      port.postMessage({ id: request.id, error: (error as Error).message });
    }
  })();
});
