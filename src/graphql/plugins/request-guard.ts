import type { ApolloServerPlugin } from '@apollo/server';
import { checkReadAccess } from '../auth';
import type { Context } from '../context';
import { checkInputs } from '../input';
import { checkOperationLimits } from '../limits';

/**
 * Checks every operation once it is parsed, validated and chosen, before it runs: the read
 * access rule (READ_ACCESS=key) first, so an anonymous caller learns nothing about costs, then
 * the arguments' strings and nesting (input.ts), depth and cost. A plugin rather than validation rules because Apollo rewrites a validation
 * rule's error code to GRAPHQL_VALIDATION_FAILED, and the cost needs the request's variables.
 */
export const requestGuard: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ contextValue, schema, document, operation, request }) {
        checkReadAccess(contextValue);
        if (!operation) return; // Apollo has already refused a document without a chosen operation
        // Before the limits: measuring cost coerces the variables, recursively.
        const { maxSectionDepth, maxMetadataDepth } = contextValue.config.ingest;
        checkInputs(schema, document, operation, request.variables, { maxSectionDepth, maxMetadataDepth });
        checkOperationLimits(schema, document, operation, request.variables, contextValue.config);
      },
    };
  },
};
