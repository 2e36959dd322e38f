import type { Config } from '../config';
import { messageOf } from '../errors';
import { startServer } from '../server';
import { indexLexical } from '../store/lexical';
import { openMigratedDatabase } from '../store/open';
import { loadDemoCorpus } from './demo';
import { describeEmbed, embedWithProgress, loadEmbedding } from './embed';
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
  // Passages written by older versions, or by an ingest that stopped early, get their index now.
  const lexical = await indexLexical(db);
  if (lexical > 0) console.error(`full-text index: ${lexical} passages`);
  // The server also works re-embedding jobs (JOB_WORKERS).
  const { url, stop } = await startServer(db, config, models);
  console.log(`DHR-GraphQL ready at ${url}`);
  await announceKeys(db, options.demo, url);
  // Whatever lacks an embedding (the demo corpus on first start) is embedded while the server answers.
  void embedWithProgress(db, embedding, config).then(
    (summary) => {
      if (summary.documents + summary.passages > 0) console.error(describeEmbed(summary, embedding));
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
