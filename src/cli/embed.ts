import type { Config } from '../config';
import { ModelRegistry } from '../pipeline/jobs/registry';
import type { Database } from '../store/db';
import { embedPending, type EmbeddingTargets, type EmbedSummary } from '../pipeline/embed';
import { ProgressBar } from './progress';

/** The active models (the configured encoders on a store that has none yet), loaded. */
export async function loadEmbedding(db: Database, config: Config): Promise<{ models: ModelRegistry; targets: EmbeddingTargets }> {
  const models = await ModelRegistry.open(db, { encoders: config.encoders, cacheDir: config.modelCacheDir, threads: config.encoderThreads });
  try {
    const targets = await models.current();
    if (!targets) throw new Error('no embedding model is active for every role');
    return { models, targets };
  } catch (error) {
    await models.close();
    throw error;
  }
}

/** Embeds what is pending with a progress bar per level; returns the summary. */
export async function embedWithProgress(
  db: Database,
  targets: EmbeddingTargets,
  config: Config,
  documentIds?: number[],
): Promise<EmbedSummary> {
  const bars = new Map<string, ProgressBar>();
  const summary = await embedPending(db, targets, {
    batchSize: config.embedBatchSize,
    documentIds,
    onProgress: ({ level, done, total }) => {
      let bar = bars.get(level);
      if (!bar) {
        bars.get('documents')?.finish();
        bar = new ProgressBar(total, `embed ${level}`);
        bars.set(level, bar);
      }
      bar.update(done);
    },
  });
  for (const bar of bars.values()) bar.finish();
  return summary;
}

export function describeEmbed(summary: EmbedSummary, targets: EmbeddingTargets): string {
  const models =
    targets.document === targets.passage ? targets.document.name : `${targets.document.name} / ${targets.passage.name}`;
  return (
    `embedded ${summary.documents} documents and ${summary.passages} passages with ${models}; ` +
    `${summary.truncated} texts truncated to their token budget`
  );
}
