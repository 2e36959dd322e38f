import type { Config } from '../config';
import { messageOf } from '../errors';
import { startServer } from '../server';
import { finishPending } from '../pipeline/pending';
import { openMigratedDatabase } from '../store/open';
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
    const loaded = await loadDemoCorpus(db, config.ingest);
    if (loaded > 0) console.error(`demo corpus: loaded ${loaded} Factbook documents`);
  }
  // Documents an ingest left unfinished (killed, or run without embedding) get their full-text
  // index before the server answers; their vectors come in the background below.
  const { indexed } = await finishPending(db);
  if (indexed > 0) console.error(`full-text index: ${indexed} passages`);
  // The server also works re-embedding jobs (JOB_WORKERS).
  const { url, stop } = await startServer(db, config, models);
  console.log(`DHR-GraphQL ready at ${url}`);
  await announceKeys(db, options.demo, url);
  // Whatever is pending (the demo corpus on first start, what an interrupted ingest left) is
  // embedded while the server answers.
  void finishWithProgress(db, embedding, config).then(
    (finished) => {
      const summary = finished.embedded;
      if (summary && summary.documents + summary.passages > 0) console.error(describeEmbed(summary, embedding));
    },
    (error: unknown) => console.error(`embedding stopped: ${messageOf(error)}`),
  );
  const shutdown = async () => {
    await stop();
    await models.close();
    await db.close();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  return new Promise<number>(() => undefined);
}
