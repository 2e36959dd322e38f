import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config';
import { DomainError, ErrorCode } from '../errors';
import { createContext } from '../graphql/context';
import { TIMED_OUT, withDeadline } from '../http/deadline';
import { packageRoot } from '../paths';
import type { ModelRegistry } from '../pipeline/jobs/registry';
import type { CorpusSettingsSource } from '../retrieval/settings';
import type { Database } from '../store/db';
import type { Principal } from '../store/keys';
import { toolError } from './errors';
import type { Caller, ToolRateLimit } from './rate-limit';
import { toolsFor } from './tools';

/** What one MCP session serves from: the store, settings and models of `dhr serve` or `dhr mcp`, and who is asking. */
export interface McpSession {
  db: Database;
  config: Config;
  models?: ModelRegistry;
  settings?: CorpusSettingsSource;
  /** The API key's holder; absent: no key (the reader tools only, where READ_ACCESS allows). */
  principal?: Principal;
  /** Over HTTP: the rate limit each call counts against, and who is calling. */
  rateLimit?: { limit: ToolRateLimit; caller: Caller };
}

let version: string | undefined;
const packageVersion = () => (version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version);

const INSTRUCTIONS =
  'Dense hierarchical retrieval over a corpus of documents with title trees. Start with search (context blocks that cite their passages); read around a citation with get_passage (neighbours) or get_section; browse with list_documents and get_document (a table of contents).';

/**
 * An MCP server offering the session's tools. Each call gets a context of its own, as a GraphQL
 * operation does (loaders, its share of the pool, its deadline), and answers its result as JSON
 * text and as structured content; a refusal is a tool error naming the argument (errors.ts).
 */
export function createMcpServer(session: McpSession): McpServer {
  const server = new McpServer({ name: 'dhr-graphql', version: packageVersion() }, { instructions: INSTRUCTIONS });
  const { db, config, models, settings, principal } = session;
  for (const tool of toolsFor(principal?.role)) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: { readOnlyHint: tool.readOnly, openWorldHint: false } },
      async (args: Record<string, unknown>): Promise<CallToolResult> => {
        const ctx = { ...createContext(db, config, models, principal), settings };
        try {
          const refusal = await session.rateLimit?.limit(session.rateLimit.caller, !tool.readOnly);
          if (refusal) throw refusal;
          // As a GraphQL request: answered TIMEOUT past REQUEST_TIMEOUT_MS (its statements are bounded by STATEMENT_TIMEOUT_MS).
          const result = await withDeadline(tool.run(ctx, args), config.requestTimeoutMs);
          if (result === TIMED_OUT) throw new DomainError(ErrorCode.TIMEOUT, `the call took longer than ${config.requestTimeoutMs} ms (REQUEST_TIMEOUT_MS)`);
          return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
        } catch (error) {
          return toolError(error, config.statementTimeoutMs, db.location);
        }
      },
    );
  }
  return server;
}
