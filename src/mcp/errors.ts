import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DomainError, ErrorCode } from '../errors';
import { typedFault } from '../graphql/db-faults';
import { currentLogger, currentRequest, newRequestId } from '../observability/request-scope';

/** The refusal an agent reads: the code and argument of a GraphQL error, as an MCP tool error. */
export interface ToolRefusal {
  code: string;
  message: string;
  argument?: string;
}

function refusalOf(error: unknown, statementTimeoutMs: number, location: string | undefined): ToolRefusal {
  if (error instanceof DomainError) return { code: error.code, message: error.message, ...(error.argument ? { argument: error.argument } : {}) };
  // Database faults get the API's typed answers (unavailable, busy, timeout), never the driver's text.
  const fault = typedFault(error, location, statementTimeoutMs);
  if (fault) return { code: String(fault.extensions.code), message: fault.message };
  const requestId = currentRequest()?.id ?? newRequestId();
  currentLogger().error({ requestId, err: error }, 'internal error in an MCP tool');
  return { code: ErrorCode.INTERNAL_SERVER_ERROR, message: `internal server error (request id ${requestId})` };
}

/**
 * A tool error (MCP's `isError` result, which the agent sees and can correct), never a stack
 * trace: the message names the argument, as GraphQL's `extensions.argument` does.
 */
export function toolError(error: unknown, statementTimeoutMs: number, location?: string): CallToolResult {
  const refusal = refusalOf(error, statementTimeoutMs, location);
  const text = `${refusal.code}: ${refusal.message}${refusal.argument ? ` (argument: ${refusal.argument})` : ''}`;
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { error: refusal } };
}

/** A DomainError naming a tool's argument where the code below named its own (retrieve's k2 is search's k). */
export function renamed(error: unknown, names: Record<string, string>): unknown {
  if (!(error instanceof DomainError) || error.argument === undefined || !(error.argument in names)) return error;
  const name = names[error.argument];
  const message = error.message.replace(new RegExp(`\\b${error.argument.replace(/[.]/g, '\\.')}\\b`, 'g'), name);
  return new DomainError(error.code, message, { argument: name, details: error.details });
}
