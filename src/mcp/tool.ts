import type { z } from 'zod';
import type { Context } from '../graphql/context';
import type { Role } from '../store/keys';

/**
 * One MCP tool: its name, what an agent reads about it, its typed input (a strict zod object, so an
 * unknown argument is refused by name) and what it does with the per-call context the GraphQL
 * resolvers get (loaders, the request's share of the pool, the principal). `role`: admin tools are
 * offered only to a session whose key has the admin role.
 */
export interface McpTool<S extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  role: Role;
  /** Reads only (MCP's readOnlyHint): agents may call it without asking. */
  readOnly: boolean;
  run(ctx: Context, args: z.output<S>): Promise<Record<string, unknown>>;
}

/** Erases a tool's own input type, so tools of different inputs share one table. */
export const defineTool = <S extends z.ZodObject>(tool: McpTool<S>): McpTool => tool as unknown as McpTool;
