import type { Config } from '../config';
import { serveStdio } from '../mcp/stdio';
import { ingestJobOptions, jobWorkerSettings, JobWorker } from '../pipeline/jobs/worker';
import { CorpusSettingsSource } from '../retrieval/settings';
import { authenticateKey, type Principal } from '../store/keys';
import { openMigratedDatabase } from '../store/open';
import { loadEmbedding } from './embed';

/**
 * `dhr mcp`: the MCP server over stdio on the local store. Without --key the reader tools; an
 * admin key adds ingest and job_status, whose jobs this process works (JOB_WORKERS), since on the
 * embedded store no other process can.
 */
export async function mcpCommand(config: Config, options: { key?: string }): Promise<number> {
  // stdout carries the protocol: whatever a module prints goes to stderr instead.
  console.log = console.error;
  const db = await openMigratedDatabase(config);
  try {
    let principal: Principal | undefined;
    if (options.key !== undefined) {
      principal = await authenticateKey(db, options.key);
      if (!principal) {
        console.error('mcp: the API key (--key or DHR_API_KEY) is unknown or revoked');
        return 1;
      }
    }
    const { models } = await loadEmbedding(db, config);
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    const workers =
      principal?.role === 'admin'
        ? Array.from(
            { length: config.jobWorkers },
            () =>
              new JobWorker(db, models, {
                ...jobWorkerSettings(config),
                log: (m) => console.error(m),
                ingest: ingestJobOptions(config),
              }),
          )
        : [];
    const running = workers.map((w) => w.run({ signal: stop.signal }));
    // A job the ingest tool queues is started now rather than at the workers' next poll.
    const unsubscribe = models.onJobQueued(() => workers.forEach((w) => w.poke()));
    try {
      await serveStdio({ db, config, models, settings: new CorpusSettingsSource(db), principal }, { stop: stop.signal });
    } finally {
      stop.abort();
      unsubscribe();
      await Promise.all(running);
      await models.close();
    }
    return 0;
  } finally {
    await db.close();
  }
}
