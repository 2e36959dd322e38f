import type { ApolloServerPlugin } from '@apollo/server';
import { Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import { classifyDatabaseError } from '../../store/faults';
import type { ReplicaSet } from '../../store/replicas';
import type { Context } from '../context';
import { createLoaders } from '../loaders';

/**
 * Query fields a replica may answer: retrieval and navigation, which tolerate data a moment old.
 * Everything else — mutations, and the admin's views of keys, jobs, models and adapters, which are
 * small and read right after the admin changed them — stays on the primary, as does any field
 * added later until it is listed here.
 */
export const REPLICA_FIELDS: ReadonlySet<string> = new Set(['retrieve', 'document', 'documents', 'section', 'passage', 'stats', 'trainingPairs']);

/**
 * Sends read-only operations to a replica (docs/scale-out.md#read-replicas) and records, after a
 * mutation, the primary's WAL position for the caller's key so its next reads see its write.
 */
export function readRouting(replicas: ReplicaSet): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ contextValue: ctx, operation, document }) {
          if (!ctx.reads || ctx.reads.primaryOnly || operation?.operation !== 'query') return;
          const fields = rootFields(operation, document);
          if (!fields.every((f) => f.startsWith('__') || REPLICA_FIELDS.has(f))) return;
          // A new model activation raises the replicas' floor (ModelRegistry.beforeSwitch) before
          // retrieve may use it, so read the assignment before choosing. If the primary cannot
          // answer, retrieve's own read of it fails the same way; navigation goes on.
          if (fields.includes('retrieve')) await ctx.models?.current().catch(() => undefined);
          const route = replicas.forRead(ctx.principal?.keyId);
          ctx.metrics?.readRoutes.inc({ target: route.replica ? 'replica' : 'primary', reason: route.reason });
          if (!route.replica) return;
          ctx.reads.replica = route.replica;
          ctx.db = route.db;
          ctx.loaders = createLoaders(route.db);
        },
        async didEncounterErrors({ contextValue: ctx, errors }) {
          // databaseFaultPlugin may have replaced the driver's error with SERVICE_UNAVAILABLE already.
          const lost = errors.some((e) => e.extensions?.code === 'SERVICE_UNAVAILABLE' || classifyDatabaseError(e) === 'unavailable');
          if (ctx.reads?.replica && lost) ctx.reads.replicaFailed = true;
        },
        async willSendResponse({ contextValue: ctx, operation }) {
          // Before the response leaves, so the caller's next request already needs the write.
          if (operation?.operation === 'mutation' && ctx.principal) await replicas.noteWrite(ctx.principal.keyId);
        },
      };
    },
  };
}

/** The operation's top-level field names, through fragments. */
export function rootFields(operation: OperationDefinitionNode, document: DocumentNode): string[] {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const names: string[] = [];
  const seen = new Set<string>();
  const stack: SelectionSetNode[] = [operation.selectionSet];
  while (stack.length > 0) {
    for (const selection of stack.pop()!.selections) {
      if (selection.kind === Kind.FIELD) names.push(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) stack.push(selection.selectionSet);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) stack.push(fragment);
      }
    }
  }
  return names;
}
