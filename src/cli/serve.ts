import type { Config } from '../config';
import { messageOf } from '../errors';
import { startServer } from '../server';
import { finishPending } from '../pipeline/pending';
import { processStopping } from '../pipeline/stopping';
import { recordServer } from '../store/data-lock';
import { openMigratedDatabase, openReplicas } from '../store/open';
import { loadDemoCorpus } from './demo';
import { loadEmbedding } from './embed';
import { announceKeys } from './keys';
import { embedWhileServing, serveEncoderThreads } from './serve-embedding';
import { ServeShutdown } from './shutdown';

/** `dhr serve`: runs until SIGINT/SIGTERM. */
export async function serve(config: Config, options: { demo: boolean }): Promise<number> {
  // Listening from the start: a signal during startup (a migration, the demo corpus, indexing)
  // stops it and closes what was opened, instead of being noticed only once the server answers.
  const shutdown = new ServeShutdown(config.shutdownGraceMs);
  const db = await shutdown.open(openMigratedDatabase(config), { close: (db) => db.close() });
  console.error(`database: ${db.kind} (${db.location})`);
  // The embedded store's lock says a server holds it (starting, then its URL), so the CLI's
  // read-only commands ask this server instead of being refused (cli/running-server.ts).
  const inLock = db.kind === 'pglite' && !config.databaseUrl;
  if (inLock) recordServer(config.dataDir, 'starting');
  // Documents and passages are encoded in a worker thread, whose threads leave a core to the
  // questions (ENCODER_THREADS overrides): the main thread answers requests meanwhile (serve-embedding.ts).
  const bulk = { ...config, encoderThreads: serveEncoderThreads(config) };
  const { models, targets: embedding } = await shutdown.open(loadEmbedding(db, bulk, { bulkThread: true }), {
    close: ({ models }) => models.close(),
  });
  console.error(
    `encoders: ${embedding.encoders
      .distinct()
      .map((e) => `${e.name} (${e.dimension}-d)`)
      .join(', ')}`,
  );
  if (options.demo) {
    const loaded = await shutdown.cut(loadDemoCorpus(db, config.ingest, undefined, embedding.encoders.byRole.passage));
    if (loaded > 0) console.error(`demo corpus: loaded ${loaded} Factbook documents`);
  }
  // Documents an ingest left unfinished (killed, or run without embedding) get their full-text
  // index before the server answers; their vectors come in the background below.
  const { indexed } = await shutdown.cut(finishPending(db));
  if (indexed > 0) console.error(`full-text index: ${indexed} passages`);
  // Read replicas (DATABASE_READ_URL) serve queries; writes, jobs and migrations stay here.
  const replicas = await shutdown.open(openReplicas(db, config), { close: async (replicas) => replicas?.close() });
  for (const r of replicas?.report() ?? []) console.error(`read replica: ${r.name} (${r.status}${r.problem ? `: ${r.problem}` : ''})`);
  // The server also works re-embedding jobs (JOB_WORKERS). Shutdown drains its requests for up to
  // SHUTDOWN_GRACE_MS while the workers finish their batch.
  // The job workers finish pending documents only once this process's own finisher below is done:
  // two finishers would encode the same passages (WorkerOptions.finishPendingNow).
  let finishing = true;
  const { url } = await shutdown.open(startServer(db, config, models, { replicas, workersFinishPending: () => !finishing }), {
    stop: ({ stop }) => stop(),
  });
  if (inLock) {
    const forget = recordServer(config.dataDir, { url });
    // Taken back as shutdown begins (the lock itself goes when the database closes).
    shutdown.onStop(async () => forget());
  }
  console.log(`DHR-GraphQL ready at ${url}`);
  await shutdown.cut(announceKeys(db, options.demo, url));
  // Whatever is pending (the demo corpus on first start, what an interrupted ingest left) is
  // embedded while the server answers, in small batches that let requests go first
  // (serve-embedding.ts); shutdown stops it between batches and waits for the one in flight.
  const embedded = embedWhileServing(db, embedding, config, { signal: processStopping })
    .then(
      () => undefined,
      (error: unknown) => console.error(`embedding stopped: ${messageOf(error)}`),
    )
    .finally(() => {
      finishing = false;
    });
  shutdown.onStop(() => embedded);
  return new Promise<number>(() => undefined);
}
