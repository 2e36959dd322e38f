import type { ApolloServer } from '@apollo/server';
import { loadConfig, type Config } from '../../src/config';
import type { Principal } from '../../src/graphql/auth';
import { createContext, type Context } from '../../src/graphql/context';
import type { EncoderSet } from '../../src/encoders/set';
import { createApolloServer } from '../../src/server';
import { ModelRegistry, type RegistryOptions } from '../../src/pipeline/jobs/registry';
import { CorpusSettingsSource } from '../../src/retrieval/settings';
import { createTestDatabase, type TestDatabase } from './database';

export interface GraphQLResult<T = any> {
  data?: T | null;
  errors?: readonly { message: string; extensions?: Record<string, unknown>; path?: readonly (string | number)[] }[];
}

/**
 * The real schema, resolvers and request guard (read access, depth, cost) on a real database,
 * without HTTP (Apollo's executeOperation). HTTP paths (headers, body size, CSRF) are tested
 * against startServer.
 */
export interface TestApi {
  testDb: TestDatabase;
  config: Config;
  /** The active models when the API was given encoders. */
  models?: ModelRegistry;
  /** Runs as the API's default principal (an admin unless `options.principal` says otherwise). */
  exec<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>>;
  /** Runs as `principal`; null runs without a key. */
  execAs<T = any>(principal: Principal | null, query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>>;
  close(): Promise<void>;
}

/** The principal tests act as by default: mutations need the admin role. */
export const TEST_ADMIN: Principal = { keyId: 0, role: 'admin', name: 'test admin' };

export interface TestApiOptions {
  /** Who `exec` acts as: TEST_ADMIN by default, null for no key. */
  principal?: Principal | null;
  /** The model registry's options (e.g. a long snapshot ttlMs, to hold a stale assignment). */
  registry?: RegistryOptions;
  /** A model registry even without encoders: the test registers and activates models itself (external ones). */
  withRegistry?: boolean;
  /** The store to serve (the Citus suite's); by default a fresh test database, dropped on close. */
  database?: () => Promise<TestDatabase>;
}

/** With `encoders`, the API embeds on ingest and reports models, as the server does. */
export async function createTestApi(env: Record<string, string> = {}, encoders?: EncoderSet, options: TestApiOptions = {}): Promise<TestApi> {
  const testDb = await (options.database ?? createTestDatabase)();
  const config = loadConfig({ ...env });
  const models = encoders
    ? await ModelRegistry.of(testDb.db, encoders, options.registry)
    : options.withRegistry
      ? new ModelRegistry(testDb.db, options.registry)
      : undefined;
  const server: ApolloServer<Context> = await createApolloServer(config);
  await server.start();
  const defaultPrincipal = options.principal === undefined ? TEST_ADMIN : options.principal;
  // The corpus's settings cached as the server caches them (server.ts), with a refresh time long
  // enough that a test counting statements never meets a refresh; changes made through this API
  // apply at once (the settings mutations invalidate it).
  const settings = new CorpusSettingsSource(testDb.db, 60_000);
  const execAs = async (principal: Principal | null, query: string, variables?: Record<string, unknown>) => {
    const response = await server.executeOperation(
      { query, variables },
      { contextValue: { ...createContext(testDb.db, config, models, principal ?? undefined), settings } },
    );
    if (response.body.kind !== 'single') throw new Error('unexpected incremental response');
    return response.body.singleResult as GraphQLResult;
  };
  return {
    testDb,
    config,
    models,
    exec: (query, variables) => execAs(defaultPrincipal, query, variables),
    execAs,
    async close() {
      await server.stop();
      await testDb.drop();
    },
  };
}

/** Throws with the GraphQL errors when there are any: keeps test failures readable. */
export function dataOf<T = any>(result: GraphQLResult<T>): T {
  if (result.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors, null, 2)}`);
  return result.data as T;
}
