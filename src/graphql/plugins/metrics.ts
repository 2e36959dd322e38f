import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { Kind, type DocumentNode, type SelectionSetNode } from 'graphql';
import type { ServerMetrics } from '../../observability/metrics';
import { noteOperationName } from '../../observability/http-log';
import { currentRequest } from '../../observability/request-scope';

/** More distinct root fields than this are labelled "multiple": labels must stay few. */
const MAX_ROOT_FIELDS = 3;

/**
 * Counts and times every GraphQL request by operation, type and outcome, counts rate-limit
 * refusals, and hands operation and outcome to the request's log line (request scope).
 *
 * The operation label is the root fields asked for ("retrieve", "document+stats"), not the
 * client's operationName: that one is free text, and one label value per name a client invents
 * would grow the registry without bound.
 */
export function metricsPlugin(metrics: ServerMetrics): ApolloServerPlugin {
  return {
    async requestDidStart() {
      const started = process.hrtime.bigint();
      let operation = 'unknown';
      let type = 'unknown';
      return {
        async didResolveOperation(context: GraphQLRequestContext<object>) {
          // The document's own name when the request sent none (server.ts notes the sent one).
          noteOperationName(currentRequest(), context.operationName);
          if (!context.operation) return;
          type = context.operation.operation;
          operation = rootFields(context.operation.selectionSet, context.document);
        },
        async willSendResponse({ response }) {
          const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
          const code = errors?.[0]?.extensions?.code;
          const outcome = errors?.length ? (typeof code === 'string' ? code : 'INTERNAL_SERVER_ERROR') : 'ok';
          const labels = { operation, type, outcome };
          metrics.requests.inc(labels);
          metrics.requestDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
          if (outcome === 'RATE_LIMITED') metrics.rateLimited.inc({ kind: type });
          const scope = currentRequest();
          if (scope) Object.assign(scope, labels);
        },
      };
    },
  };
}

/** Names of the fields selected at the root, through fragments; sorted, distinct. */
function rootFields(selectionSet: SelectionSetNode, document: DocumentNode | undefined): string {
  const names = new Set<string>();
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = document?.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value);
        if (fragment?.kind === Kind.FRAGMENT_DEFINITION) visit(fragment.selectionSet);
      }
    }
  };
  visit(selectionSet);
  if (names.size === 0) return 'unknown';
  return names.size > MAX_ROOT_FIELDS ? 'multiple' : [...names].sort().join('+');
}
