import { availableParallelism } from 'node:os';
import type { Config } from '../config';
import { inBackground } from '../encoders/priority';
import type { EmbeddingTargets, EmbedSummary } from '../pipeline/embed';
import { yieldToRequests } from '../pipeline/foreground';
import { finishPending } from '../pipeline/pending';
import { coverage, type LevelCounts } from '../store/coverage';
import type { Database } from '../store/db';
import { embedProgress } from './embed';
import { duration } from './progress';

/**
 * Rows per background batch. The encoding runs in a worker thread (BulkThreadEncoder), but the
 * write (an HNSW insert per vector; on PGlite on the main thread) and the read do not: a request
 * that arrives meanwhile waits for at most one small batch's statement.
 */
export const SERVE_EMBED_BATCH = 8;

/**
 * Intra-op threads of the bulk (corpus) encoder while serving: ENCODER_THREADS, else every core but
 * one, which is left to the questions and the database (bench:responsive, docs/benchmarks.md).
 */
export function serveEncoderThreads(config: Pick<Config, 'encoderThreads'>, cores = availableParallelism()): number {
  return config.encoderThreads > 0 ? config.encoderThreads : Math.max(1, cores - 1);
}

export interface ServeEmbedResult {
  /** What this run encoded and wrote (null: there was nothing to embed with). */
  embedded: EmbedSummary | null;
  /** The store's counts for the active models once the run ended: what the last line reports. */
  coverage: { documents: LevelCounts; passages: LevelCounts };
  seconds: number;
}

/**
 * What `dhr serve` embeds while it answers (the demo corpus on first start, what an interrupted
 * ingest left): pending documents and their passages in small batches, each encoded with no
 * transaction open and written in its own statement, yielding to requests before each batch
 * (pipeline/foreground.ts). A progress bar per level (documents, then passages) with rate and ETA;
 * the last line reports the store's coverage, which counts vectors written by anyone (a job worker,
 * an ingest meanwhile), not only this loop's.
 */
export async function embedWhileServing(
  db: Database,
  targets: EmbeddingTargets,
  config: Pick<Config, 'embedBatchSize'>,
  options: { signal?: AbortSignal; stream?: NodeJS.WritableStream & { isTTY?: boolean } } = {},
): Promise<ServeEmbedResult> {
  const started = Date.now();
  const stream = options.stream ?? process.stderr;
  const progress = embedProgress(stream);
  let result;
  try {
    // Background work: its batches go to the corpus thread of lower priority (encoders/priority.ts).
    result = await inBackground(() =>
      finishPending(db, {
        embedWith: async () => targets,
        embedBatchSize: Math.min(config.embedBatchSize, SERVE_EMBED_BATCH),
        onEmbedProgress: progress.update,
        signal: options.signal,
        yieldTo: () => yieldToRequests(),
      }),
    );
  } finally {
    progress.finish();
  }
  const counts = await coverage(db, { document: targets.document.id, passage: targets.passage.id });
  const seconds = (Date.now() - started) / 1000;
  const embedded = result.embedded;
  if (embedded && embedded.documents + embedded.passages > 0) stream.write(`${describeCoverage(counts, embedded, targets, seconds)}\n`);
  return { embedded, coverage: counts, seconds };
}

/** The last line: coverage (the store's counts), then what this run did. */
export function describeCoverage(counts: ServeEmbedResult['coverage'], run: EmbedSummary, targets: EmbeddingTargets, seconds: number): string {
  const models = targets.document.id === targets.passage.id ? targets.document.name : `${targets.document.name} / ${targets.passage.name}`;
  return (
    `embedded ${counts.documents.embedded}/${counts.documents.total} documents and ${counts.passages.embedded}/${counts.passages.total} passages ` +
    `with ${models} (coverage); this start wrote ${run.documents} documents and ${run.passages} passages in ${duration(seconds)}, ` +
    `${run.truncated} texts truncated to their token budget`
  );
}
