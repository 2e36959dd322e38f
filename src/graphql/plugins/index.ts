import type { Server } from 'node:http';
import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import type { Config } from '../../config';
import type { ServerMetrics } from '../../observability/metrics';
import type { ReplicaSet } from '../../store/replicas';
import type { Context } from '../context';
import { databaseFaultPlugin } from './database-faults';
import { errorStatus } from './error-status';
import { metricsPlugin } from './metrics';
import { rateLimitPlugin } from './rate-limit';
import { readRouting } from './read-routing';
import { refuseSubscriptions } from './refuse-subscriptions';
import { requestGuard } from './request-guard';

/**
 * What the HTTP server adds: the parts a plugin needs that only a listening server has. An
 * Apollo server without them (`dhr ask` in-process, the tests' API) runs the plugins that need
 * none, so it checks and types requests exactly as the server does.
 */
export interface ServerParts {
  config: Pick<Config, 'rateLimitQueries' | 'rateLimitMutations' | 'rateLimitWindowS' | 'shutdownGraceMs'>;
  metrics: ServerMetrics;
  httpServer: Server;
  replicas?: ReplicaSet;
}

/**
 * Every Apollo plugin the server runs (one list, as apollo-server keeps its own; one file a
 * plugin, in this folder). Apollo calls each phase's hooks in this order but awaits them together
 * (Promise.all), so no plugin may rely on another's hook of the same phase having finished; where
 * order shows (refuseSubscriptions' error is the first one reported), it is this list's.
 */
export function graphqlPlugins(server?: ServerParts): ApolloServerPlugin<Context>[] {
  return [
    refuseSubscriptions,
    requestGuard,
    errorStatus,
    databaseFaultPlugin,
    ApolloServerPluginLandingPageDisabled(),
    ...(server
      ? [
          rateLimitPlugin(server.config),
          metricsPlugin(server.metrics),
          // stop(): close the listener, let in-flight requests finish for SHUTDOWN_GRACE_MS, then cut what is left.
          ApolloServerPluginDrainHttpServer({ httpServer: server.httpServer, stopGracePeriodMillis: server.config.shutdownGraceMs }),
          ...(server.replicas ? [readRouting(server.replicas)] : []),
        ]
      : []),
  ];
}
