import type { Config } from '../config';
import { embedPending, type EmbeddingTargets, type EmbedProgress, type EmbedSummary } from '../pipeline/embed';
import { ModelRegistry } from '../pipeline/jobs/registry';
import { finishPending, type FinishResult } from '../pipeline/pending';
import type { Database } from '../store/db';
import { openMigratedDatabase } from '../store/open';
import { ProgressBar } from './progress';

/** The active models (the configured encoders on a store that has none yet), loaded. */
export async function loadEmbedding(
  db: Database,
  config: Config,
  options: { bulkThread?: boolean } = {},
): Promise<{ models: ModelRegistry; targets: EmbeddingTargets }> {
  const models = await ModelRegistry.open(db, {
    bulkThread: options.bulkThread,
    encoders: config.encoders,
    cacheDir: config.modelCacheDir,
    threads: config.encoderThreads,
    queryThreads: config.encoderQueryThreads,
    questions: config.questionQueue,
  });
  try {
    const targets = await models.current();
    if (!targets) throw new Error('no embedding model is active for every role');
    return { models, targets };
  } catch (error) {
    await models.close();
    throw error;
  }
}

/** One progress bar per level (documents, then passages). */
export function embedProgress(stream?: NodeJS.WritableStream & { isTTY?: boolean }): { update: (progress: EmbedProgress) => void; finish: () => void } {
  const bars = new Map<string, ProgressBar>();
  return {
    update: ({ level, done, total }) => {
      let bar = bars.get(level);
      if (!bar) {
        bars.get('documents')?.finish();
        bar = new ProgressBar(total, `embed ${level}`, stream);
        bars.set(level, bar);
      }
      bar.update(done);
    },
    finish: () => {
      for (const bar of bars.values()) bar.finish();
    },
  };
}

/**
 * Finishes the documents recorded as pending (pipeline/pending.ts) with a progress bar per level:
 * index only without targets, index and embed with them.
 */
export async function finishWithProgress(db: Database, targets: EmbeddingTargets | undefined, config: Config, signal?: AbortSignal): Promise<FinishResult> {
  const progress = embedProgress();
  const result = await finishPending(db, {
    embedWith: targets ? async () => targets : undefined,
    embedBatchSize: config.embedBatchSize,
    onEmbedProgress: progress.update,
    signal,
  });
  progress.finish();
  return result;
}

/** Embeds what is pending with a progress bar per level; returns the summary. */
export async function embedWithProgress(db: Database, targets: EmbeddingTargets, config: Config, signal?: AbortSignal): Promise<EmbedSummary> {
  const progress = embedProgress();
  const summary = await embedPending(db, targets, { batchSize: config.embedBatchSize, onProgress: progress.update, signal });
  progress.finish();
  return summary;
}

function addSummaries(a: EmbedSummary, b: EmbedSummary): EmbedSummary {
  return { documents: a.documents + b.documents, passages: a.passages + b.passages, truncated: a.truncated + b.truncated, tokens: a.tokens + b.tokens };
}

export function describeEmbed(summary: EmbedSummary, targets: EmbeddingTargets): string {
  const models = targets.document === targets.passage ? targets.document.name : `${targets.document.name} / ${targets.passage.name}`;
  return (
    `embedded ${summary.documents} documents and ${summary.passages} passages with ${models}; ` + `${summary.truncated} texts truncated to their token budget`
  );
}

/** `dhr embed`. */
export async function embedCommand(config: Config): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    const { models, targets } = await loadEmbedding(db, config);
    try {
      // What interrupted ingests left (indexed, embedded, records cleared), then anything else without a current vector.
      const finished = await finishWithProgress(db, targets, config);
      if (finished.indexed > 0) console.log(`full-text index: ${finished.indexed} passages`);
      const rest = await embedWithProgress(db, targets, config);
      const both = finished.embedded ? addSummaries(finished.embedded, rest) : rest;
      console.log(describeEmbed(both, targets));
    } finally {
      await models.close();
    }
  } finally {
    await db.close();
  }
  return 0;
}
