import type { ApolloServer } from '@apollo/server';
import { loadConfig, type Config } from '../../src/config';
import { createContext, type Context } from '../../src/graphql/context';
import type { EncoderSet } from '../../src/encoders/set';
import { createApolloServer } from '../../src/server';
import { ModelRegistry } from '../../src/jobs/registry';
import { createTestDatabase, type TestDatabase } from './database';

export interface GraphQLResult<T = any> {
  data?: T | null;
  errors?: readonly { message: string; extensions?: Record<string, unknown>; path?: readonly (string | number)[] }[];
}

/** The real schema and resolvers on a real database, without HTTP (Apollo's executeOperation). */
export interface TestApi {
  testDb: TestDatabase;
  config: Config;
  /** The active models when the API was given encoders. */
  models?: ModelRegistry;
  exec<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>>;
  close(): Promise<void>;
}

/** With `encoders`, the API embeds on ingest and reports models, as the server does. */
export async function createTestApi(env: Record<string, string> = {}, encoders?: EncoderSet): Promise<TestApi> {
  const testDb = await createTestDatabase();
  const config = loadConfig({ ...env });
  const models = encoders ? await ModelRegistry.of(testDb.db, encoders) : undefined;
  const server: ApolloServer<Context> = await createApolloServer();
  await server.start();
  return {
    testDb,
    config,
    models,
    async exec(query, variables) {
      const response = await server.executeOperation(
        { query, variables },
        { contextValue: createContext(testDb.db, config, models) },
      );
      if (response.body.kind !== 'single') throw new Error('unexpected incremental response');
      return response.body.singleResult as GraphQLResult;
    },
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
