import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { DomainError, ErrorCode, reportedCode, unauthenticated } from '../errors';
import { BodyTooLargeError, readBody } from '../http/body';
import { writeRefusal } from '../http/refusal';
import { requestsInFlight } from '../pipeline/foreground';
import type { Principal } from '../store/keys';
import { toolRateLimit } from './rate-limit';
import { createMcpServer, type McpSession } from './server';

/** Where agents reach the MCP server on `dhr serve` (MCP_ENABLED). */
export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  session: Omit<McpSession, 'principal'>;
  /** The principal of the request's Authorization header, as /graphql reads it (undefined without one; a bad key throws its DomainError). */
  authenticate: (req: IncomingMessage) => Promise<Principal | undefined>;
}

/**
 * POST /mcp: the MCP Streamable HTTP transport, stateless (a server and transport per request, no
 * session to keep, so any instance behind a balancer answers), with JSON responses. The same keys
 * and roles as /graphql: a bad key is refused before anything is read, no key is refused under
 * READ_ACCESS=key, and the tools offered are the key's role's; MAX_IN_FLIGHT, MAX_BODY_BYTES and the
 * rate limits (rate-limit.ts) bound it as they bound GraphQL. Off unless MCP_ENABLED: then 404
 * naming the setting. Returns false for every other path.
 */
export function mcpRoute(options: McpRouteOptions): (req: IncomingMessage, res: ServerResponse) => Promise<boolean> {
  const { session } = options;
  const { config } = session;
  const limit = toolRateLimit(config);
  return async (req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== MCP_PATH) return false;
    if (!config.mcpEnabled) {
      req.resume();
      refuse(res, new DomainError(ErrorCode.NOT_FOUND, 'the MCP server is off here: start the server with MCP_ENABLED=true'));
      return true;
    }
    // Stateless: no stream of server-initiated messages to open (GET) and no session to end (DELETE).
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      refuse(res, new DomainError(ErrorCode.METHOD_NOT_ALLOWED, `${req.method} is not served at ${MCP_PATH}: send MCP messages with POST`));
      return true;
    }
    // Load shedding as for GraphQL (MAX_IN_FLIGHT): refused before the body is read.
    if (config.maxInFlight > 0 && requestsInFlight() > config.maxInFlight) {
      req.resume();
      refuse(res, new DomainError(ErrorCode.OVERLOADED, `the server has ${config.maxInFlight} requests in flight already (MAX_IN_FLIGHT); retry shortly`));
      return true;
    }
    let principal: Principal | undefined;
    try {
      principal = await options.authenticate(req);
      if (!principal && config.readAccess === 'key') {
        throw unauthenticated('this server needs an API key for every request (READ_ACCESS=key): send "Authorization: Bearer <key>"');
      }
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      req.resume();
      refuse(res, error);
      return true;
    }
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, config.maxBodyBytes)).toString('utf8'));
    } catch (error) {
      if (error instanceof BodyTooLargeError) {
        res.setHeader('connection', 'close');
        req.resume();
        refuse(res, error);
      } else if (error instanceof SyntaxError) {
        refuse(res, new DomainError(ErrorCode.BAD_REQUEST, 'the request body is not valid JSON'), PARSE_ERROR);
      } else throw error;
      return true;
    }
    const caller = principal ? { keyId: principal.keyId } : { address: req.socket.remoteAddress ?? 'unknown' };
    const server = createMcpServer({ ...session, principal, rateLimit: { limit, caller } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    return true;
  };
}

/** JSON-RPC's code for a body that does not parse; other refusals use the SDK's transport-level code. */
const PARSE_ERROR = -32700;
const SERVER_ERROR = -32000;

/** A refusal before MCP sees the request, as a JSON-RPC error carrying the API's code (data.code). */
function refuse(res: ServerResponse, error: DomainError, rpcCode = SERVER_ERROR): void {
  const data = { code: reportedCode(error.code) };
  writeRefusal(res, error, { jsonrpc: '2.0', error: { code: rpcCode, message: error.message, data }, id: null }, 400);
}
