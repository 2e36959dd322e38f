/**
 * The worker thread of span-thread.ts: tags the typed spans of stored sentences (spansToStore)
 * off the main thread. Messages { id, passages } (each passage's sentence texts); answers
 * { id, spans } or { id, error }.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { spansToStore } from '../retrieval/sentence-vectors';

const { nice } = workerData as { nice: number };
// As the corpus encoder threads (bulk-worker.ts): background tagging yields the cores to requests.
if (nice !== 0) {
  try {
    setPriority(0, nice);
  } catch {
    // Not permitted or not supported here: the thread keeps the process's priority.
  }
}

const port = parentPort!;
port.on('message', (request: { id: number; passages: string[][] }) => {
  spansToStore(request.passages).then(
    (spans) => port.postMessage({ id: request.id, spans }),
    (error: unknown) => port.postMessage({ id: request.id, error: (error as Error).message }),
  );
});
