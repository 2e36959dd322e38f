import type { Config } from '../config';
import { messageOf } from '../errors';
import { startServer } from '../server';
import { finishPending } from '../pipeline/pending';
import { openMigratedDatabase, openReplicas } from '../store/open';
import { loadDemoCorpus } from './demo';
import { describeEmbed, finishWithProgress, loadEmbedding } from './embed';
import { announceKeys } from './keys';

/** `dhr serve`: runs until SIGINT/SIGTERM. */
export async function serve(config: Config, options: { demo: boolean }): Promise<number> {
  const db = await openMigratedDatabase(config);
  console.error(`database: ${db.kind} (${db.location})`);
  const { models, targets: embedding } = await loadEmbedding(db, config);
  console.error(`encoders: ${embedding.encoders.distinct().map((e) => `${e.name} (${e.dimension}-d)`).join(', ')}`);
  if (options.demo) {
    const loaded = await loadDemoCorpus(db, config.ingest, undefined, embedding.encoders.byRole.passage);
    if (loaded > 0) console.error(`demo corpus: loaded ${loaded} Factbook documents`);
  }
  // Documents an ingest left unfinished (killed, or run without embedding) get their full-text
  // index before the server answers; their vectors come in the background below.
  const { indexed } = await finishPending(db);
  if (indexed > 0) console.error(`full-text index: ${indexed} passages`);
  // Read replicas (DATABASE_READ_URL) serve queries; writes, jobs and migrations stay here.
  const replicas = await openReplicas(db, config);
  for (const r of replicas?.report() ?? []) console.error(`read replica: ${r.name} (${r.status}${r.problem ? `: ${r.problem}` : ''})`);
  // The server also works re-embedding jobs (JOB_WORKERS).
  const { url, stop } = await startServer(db, config, models, { replicas });
  console.log(`DHR-GraphQL ready at ${url}`);
  await announceKeys(db, options.demo, url);
  // Whatever is pending (the demo corpus on first start, what an interrupted ingest left) is
  // embedded while the server answers; shutdown stops it between batches.
  const stopEmbedding = new AbortController();
  const embedded = finishWithProgress(db, embedding, config, stopEmbedding.signal).then(
    (finished) => {
      const summary = finished.embedded;
      if (summary && summary.documents + summary.passages > 0) console.error(describeEmbed(summary, embedding));
    },
    (error: unknown) => console.error(`embedding stopped: ${messageOf(error)}`),
  );
  // Graceful shutdown (docs/operations.md#shutdown): stop accepting, drain in-flight requests for up
  // to SHUTDOWN_GRACE_MS, let job workers and background embedding finish their batch, close the
  // database (releasing the data folder's lock), exit 0. A second signal exits at once.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      console.error(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    console.error(`${signal}: shutting down (in-flight requests get up to ${config.shutdownGraceMs} ms)`);
    stopEmbedding.abort();
    try {
      await stop();
      await embedded;
      await models.close();
      await replicas?.close();
      await db.close();
    } catch (error) {
      console.error(`shutdown: ${messageOf(error)}`);
      process.exit(1);
    }
    console.error('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  return new Promise<number>(() => undefined);
}
