import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type McpSession } from './server';

/**
 * The MCP server over stdio (`dhr mcp`, for an agent that starts it as a child process): JSON-RPC
 * messages on stdin and stdout. Resolves when the agent closes stdin (or `stop` is called).
 */
export async function serveStdio(
  session: McpSession,
  io: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream; stop?: AbortSignal } = {},
): Promise<void> {
  const stdin = (io.stdin ?? process.stdin) as NodeJS.ReadStream;
  const server = createMcpServer(session);
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    io.stop?.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(new StdioServerTransport(stdin, (io.stdout ?? process.stdout) as NodeJS.WriteStream));
  await ended;
  await server.close();
}
