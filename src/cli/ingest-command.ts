import type { Config } from '../config';
import { type ServerOptions, serverFor } from './transport';

export interface IngestOptions extends ServerOptions {
  source?: string;
  embed: boolean;
  batchPassages?: number;
  /** With --url: ingest jobs to follow instead of paths. */
  job?: number[];
  retryFor?: number;
}

/**
 * `dhr ingest`: where the files go, chosen by the transport (cli/transport.ts serverFor). On the
 * store the pipeline streams them through this process (cli/ingest.ts); to a server they become
 * durable ingest jobs this command sends and follows (cli/remote-commands.ts). Each side is loaded
 * only when it runs: the remote one is a GraphQL client and opens no store.
 */
export function ingestCommand(config: Config, paths: string[], options: IngestOptions): Promise<number> {
  const target = serverFor(config, options, 'ingest');
  const refuse = (message: string) => {
    console.error(`ingest: ${message}`);
    return Promise.resolve(1);
  };
  if (options.job && !target) return refuse('--job follows an ingest job on a server: give --url too');
  if (paths.length === 0 && !options.job) return refuse('give the files or directories to ingest');
  if (!target) return (require('./ingest') as typeof import('./ingest')).ingestFiles(config, paths, options);
  if (!options.embed) return refuse('--no-embed cannot be used with --url (the server embeds when its EMBED_ON_INGEST is on)');
  return (require('./remote-commands') as typeof import('./remote-commands')).remoteIngest(config, target, paths, {
    source: options.source,
    jobs: options.job,
    retryForS: options.retryFor,
  });
}
