import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import type { Config } from './config';
import { createContext, type Context } from './graphql/context';
import { buildGraphQLSchema } from './graphql/schema';
import type { Database } from './store/db';
import type { ModelRegistry } from './jobs/registry';

export async function createApolloServer(): Promise<ApolloServer<Context>> {
  const schema = await buildGraphQLSchema();
  // CSRF prevention is on by default in Apollo Server 5; kept explicit because it matters.
  return new ApolloServer<Context>({ schema, csrfPrevention: true, introspection: true });
}

export async function startServer(
  db: Database,
  config: Config,
  models?: ModelRegistry,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = await createApolloServer();
  const { url } = await startStandaloneServer(server, {
    listen: { port: config.port, host: config.host },
    context: async () => createContext(db, config, models),
  });
  return { url, stop: () => server.stop() };
}
