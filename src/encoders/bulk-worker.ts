/**
 * The worker thread of BulkThreadEncoder (bulk-thread.ts): loads one model and encodes corpus
 * batches (documents, passages) off the main thread. Messages: { load } once, then { id, texts,
 * role, batchSize }; answers { id, vectors, stats } or { id, error }.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadEncoder, type EncoderSetOptions } from './set';
import type { EncoderRole } from './types';

interface Request {
  id: number;
  texts: string[];
  role: EncoderRole;
  batchSize?: number;
}

const { source, options } = workerData as { source: string; options: EncoderSetOptions };
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
