import type { Config } from '../config';
import { DomainError } from '../errors';
import type { Database } from '../store/db';
import type { Principal, Role } from '../store/keys';
import { operationError, remoteGraphQL } from './remote';
import { servedTarget } from './running-server';

/**
 * Where a command's GraphQL operations go, decided here and nowhere else: to `--url` as given;
 * else, for a command in ASKS_SERVED, to the server that holds the embedded store while it runs
 * (cli/running-server.ts); else in-process, against the schema built over the opened store (the
 * same resolvers and guards as the server's). A command is its operation and a printer of the
 * result, the same whichever way it went.
 */
export interface Transport {
  /** What `dhr stats` names as its database and location: the store's kind and place, or 'remote' and the server's URL. */
  readonly database: string;
  readonly location: string;
  /** The server's URL; absent in-process. */
  readonly url?: string;
  /** In-process only: the opened store, for work a command does in this process beside its operations (dhr reembed's worker). */
  readonly store?: Database;
  request<T>(document: string, variables?: Record<string, unknown>): Promise<T>;
}

/** --url / --key as the commands take them (--key also for the server holding the store). */
export interface ServerOptions {
  url?: string;
  key?: string;
}

/** A running server's GraphQL API. */
export interface RemoteTarget {
  url: string;
  apiKey?: string;
  /** Restates a refusal (the server found through the store's lock: cli/running-server.ts). */
  explain?: (error: DomainError) => DomainError;
}

/**
 * The commands that ask the server holding the embedded store instead of being refused (they only
 * read), and the key each needs from a server that is not public.
 */
const ASKS_SERVED: Readonly<Record<string, Role>> = {
  ask: 'reader',
  stats: 'reader',
  'models list': 'reader',
  'jobs list': 'reader',
  'settings show': 'reader',
  'settings history': 'reader',
  'keys list': 'admin',
  'adapters list': 'admin',
};

export const asksServedStore = (command: string): boolean => Object.hasOwn(ASKS_SERVED, command);

/** The server a command's operations go to (`command`: its path, e.g. `keys list`); undefined: the store itself. */
export function serverFor(config: Config, options: ServerOptions, command: string): RemoteTarget | undefined {
  if (options.url) return { url: options.url, apiKey: options.key };
  const role = ASKS_SERVED[command];
  return role ? servedTarget(config, options.key, command, role) : undefined;
}

/** The local store's owner: every operation, as for every other local dhr command. */
const OWNER: Principal = { keyId: 0, role: 'admin', name: 'cli' };

/**
 * Runs `fn` over the transport chosen for `command`. A refused operation (a DomainError) is
 * answered `command: message` (a server's with its code), exit code 1, unless `answer` is false:
 * then it is thrown (dhr ask's refusals are the message alone). `label`: the name refusals are
 * said under, where it is not the command's (`settings` for all of settings'). `encoders`:
 * in-process, load the active models (retrieval needs them; the other operations do not).
 */
export async function withTransport(
  config: Config,
  options: ServerOptions,
  command: string,
  fn: (transport: Transport) => Promise<number>,
  { encoders = false, answer = true, label = command }: { encoders?: boolean; answer?: boolean; label?: string } = {},
): Promise<number> {
  const server = serverFor(config, options, command);
  const answered = async (transport: Transport) => {
    try {
      return await fn(transport);
    } catch (error) {
      if (!answer || !(error instanceof DomainError)) throw error;
      console.error(`${label}: ${error.message}${transport.url ? ` (${error.code})` : ''}`);
      return 1;
    }
  };
  if (server) {
    return answered({
      database: 'remote',
      location: server.url,
      url: server.url,
      request: (document, variables) => remoteGraphQL(server.url, document, variables, server),
    });
  }
  return inProcess(config, encoders, answered);
}

/** The store opened for one command, its operations run through the in-process API, closed after. */
async function inProcess(config: Config, encoders: boolean, fn: (transport: Transport) => Promise<number>): Promise<number> {
  // Loaded here, not at the top: a command sent to a server needs none of the store, encoders or schema.
  const { openMigratedDatabase } = require('../store/open') as typeof import('../store/open');
  const { loadEmbedding } = require('./embed') as typeof import('./embed');
  const { createApolloServer } = require('../server') as typeof import('../server');
  const { createContext } = require('../graphql/context') as typeof import('../graphql/context');
  const db = await openMigratedDatabase(config);
  try {
    const models = encoders ? (await loadEmbedding(db, config)).models : undefined;
    try {
      const server = await createApolloServer(config);
      await server.start();
      try {
        return await fn({
          database: db.kind,
          location: db.location,
          store: db,
          request: async <T>(document: string, variables?: Record<string, unknown>) => {
            const response = await server.executeOperation<T & Record<string, unknown>>(
              { query: document, variables },
              { contextValue: createContext(db, config, models, OWNER) },
            );
            if (response.body.kind !== 'single') throw new Error('unexpected incremental response');
            const { data, errors } = response.body.singleResult;
            if (errors?.length) {
              const [first] = errors;
              throw operationError(
                {
                  message: first.message,
                  extensions: { code: first.extensions?.code as string | undefined, argument: first.extensions?.argument as string | undefined },
                },
                first.message,
              );
            }
            return data as T;
          },
        });
      } finally {
        await server.stop();
      }
    } finally {
      await models?.close();
    }
  } finally {
    await db.close();
  }
}
