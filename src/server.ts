import { createServer, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApolloServer, HeaderMap, type HTTPGraphQLRequest } from '@apollo/server';
import type { Config } from './config';
import { DomainError, ErrorCode, reportedCode, unauthenticated } from './errors';
import { bearerKey } from './graphql/auth';
import { createContext, type Context, type ReadsState } from './graphql/context';
import { formatError, newRequestId, toGraphQLError } from './graphql/errors';
import { graphqlPlugins, type ServerParts } from './graphql/plugins';
import { buildGraphQLSchema } from './graphql/schema';
import { BodyTooLargeError, readBody } from './http/body';
import { consoleHandler } from './http/console';
import { writeRefusal } from './http/refusal';
import { contextFault } from './graphql/db-faults';
import { TIMED_OUT, withDeadline } from './http/deadline';
import { authFailureLimit, type AuthFailureLimit } from './graphql/auth-failures';
import { attachClientAddress } from './graphql/plugins/rate-limit';
import type { ModelRegistry } from './pipeline/jobs/registry';
import { ingestJobOptions, jobWorkerSettings, JobWorker } from './pipeline/jobs/worker';
import { requestStarted, requestsInFlight } from './pipeline/foreground';
import { CorpusSettingsSource } from './retrieval/settings';
import type { Database } from './store/db';
import { authenticateKey, type Principal } from './store/keys';
import type { ReplicaSet } from './store/replicas';
import type { DestinationStream } from 'pino';
import { readinessCheck } from './http/readiness';
import { operationalRoutes } from './http/routes';
import { mcpRoute } from './mcp/http';
import { logRequestWhenDone, noteOperationName } from './observability/http-log';
import { createLogger, type Logger } from './observability/logger';
import { ServerMetrics } from './observability/metrics';
import { currentRequest, runInRequest, type RequestScope } from './observability/request-scope';

/**
 * The Apollo server: every request checked and typed by the plugins of graphql/plugins. `server`:
 * the parts only a listening HTTP server has (rate limits, metrics, drain, read routing); without
 * them (`dhr ask` in-process, the tests' API), the plugins that need none.
 */
export async function createApolloServer(config?: Pick<Config, 'maxQueryTokens'>, server?: ServerParts): Promise<ApolloServer<Context>> {
  const schema = await buildGraphQLSchema();
  return new ApolloServer<Context>({
    schema,
    // CSRF prevention is on by default in Apollo Server 5; kept explicit because it matters.
    csrfPrevention: true,
    // One operation per HTTP request, so the depth, cost and body limits bound a request.
    allowBatchedHttpRequests: false,
    introspection: true,
    // Errors are ours to shape (formatError, which adds stack traces under DHR_DEBUG=1); Apollo's
    // default follows NODE_ENV, which nothing sets.
    includeStacktraceInErrorResponses: false,
    // `dhr serve` shuts down in order itself (src/cli/serve.ts); Apollo's own handler would stop
    // the server and then re-send the signal, killing the process before the database is closed.
    stopOnTerminationSignals: false,
    formatError,
    // Automatic persisted queries stay on (Apollo's default, in its bounded in-memory cache): a hash
    // the cache lacks answers PERSISTED_QUERY_NOT_FOUND with HTTP 200, as APQ clients expect before
    // they resend the query; a hash that is not the query's, or a version other than 1, is a 400
    // that formatError types as BAD_REQUEST.
    plugins: graphqlPlugins(server),
    // graphql-js stops parsing past this many tokens, before validation can take quadratic time.
    parseOptions: { maxTokens: config?.maxQueryTokens ?? 5000 },
  });
}

/**
 * The HTTP server: node:http around Apollo's executeHTTPGraphQLRequest rather than
 * startStandaloneServer, whose body parser has a fixed 50 MB limit. Reads at most
 * MAX_BODY_BYTES, answers CORS like the standalone server did (any origin: clients
 * authenticate with a header, not cookies), and turns `Authorization: Bearer <key>` into the
 * context's principal. Headers are never logged.
 */
export async function startServer(
  db: Database,
  config: Config,
  models?: ModelRegistry,
  options: {
    logDestination?: DestinationStream;
    replicas?: ReplicaSet;
    /** While false, the job workers leave pending records to the caller (serve's first-start finisher: WorkerOptions). */
    workersFinishPending?: () => boolean;
  } = {},
): Promise<{ url: string; stop: () => Promise<void>; log: Logger }> {
  // Observability (docs/operations.md#observability): JSON log, /metrics, /healthz, /readyz.
  const log = createLogger({ level: config.logLevel, format: config.logFormat, destination: options.logDestination });
  const { replicas } = options;
  const metrics = new ServerMetrics(db, replicas);
  const unwatch = replicas ? watchReplicas(replicas, models, log) : undefined;
  // Created below, before the listener opens: its plugins need the HTTP server (drain).
  let server: ApolloServer<Context> | undefined;
  const authFailures = authFailureLimit(config);
  // One per process: every question reads the corpus's settings from it, refreshed each second.
  const settings = new CorpusSettingsSource(db);
  const routes = operationalRoutes({
    metrics,
    ready: readinessCheck(db, { modelsLoaded: models !== undefined, replicas }),
    authorizeMetrics: (req) => authorizeMetrics(db, config, authFailures, req),
    sendError: (res, error) => sendError(res, error),
  });
  // /mcp (MCP_ENABLED): agents' tools over the same store, keys and roles as GraphQL.
  const mcp = mcpRoute({
    session: { db, config, models, settings },
    authenticate: async (req) => {
      const header = req.headers.authorization;
      return header === undefined ? undefined : authenticate(db, authFailures, req.socket.remoteAddress ?? 'unknown', header);
    },
  });
  const serveConsole = consoleHandler();
  const httpServer = createServer((req, res) => {
    // Background embedding waits while requests are in flight (pipeline/foreground.ts).
    res.once('close', requestStarted());
    const requestId = newRequestId();
    res.setHeader('x-request-id', requestId);
    const scope: RequestScope = { id: requestId, log };
    logRequestWhenDone(req, res, scope);
    // The console's pages and assets (src/http/console.ts); then /healthz, /readyz, /metrics, /mcp; the rest is GraphQL.
    if (serveConsole(req, res)) return;
    const serve = async () =>
      (await routes(req, res)) || (await mcp(req, res)) || (await handle(server!, req, res, db, config, models, metrics, replicas, authFailures, settings));
    runInRequest(scope, serve).catch((error: unknown) => {
      log.error({ requestId, err: error }, 'request failed');
      if (!res.headersSent) {
        sendError(res, new DomainError(ErrorCode.INTERNAL_SERVER_ERROR, `internal server error (request id ${requestId})`), { requestId });
      } else res.end();
    });
  });
  httpServer.on('clientError', (error: Error & { code?: string }, socket: Duplex) => refuseMalformed(error, socket, log));
  server = await createApolloServer(config, { config, metrics, httpServer, replicas });
  await server.start();
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen({ port: config.port, host: config.host }, resolve);
  });
  // Without encoders the workers still run ingest jobs (written and indexed; embedded later).
  const workers = startWorkers(db, models, config, log, options.workersFinishPending);
  return {
    url: urlOf(httpServer),
    log,
    // Draining requests and finishing the workers' current batches happen together.
    stop: async () => {
      await Promise.all([workers?.stop(), server?.stop()]);
      unwatch?.();
    },
  };
}

/** METRICS_ACCESS=key: /metrics needs a reader or admin key, checked like a GraphQL request's. */
async function authorizeMetrics(db: Database, config: Config, authFailures: AuthFailureLimit, req: IncomingMessage): Promise<DomainError | undefined> {
  if (config.metricsAccess === 'public') return undefined;
  try {
    const header = req.headers.authorization;
    if (header === undefined) return unauthenticated('/metrics needs an API key here (METRICS_ACCESS=key): send "Authorization: Bearer <key>"');
    await authenticate(db, authFailures, req.socket.remoteAddress ?? 'unknown', header);
    return undefined;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

/**
 * The principal of a request that sends an Authorization header. A malformed, unknown or revoked
 * key counts against the client address (RATE_LIMIT_AUTH_FAILURES); past that budget such a key
 * is refused with RATE_LIMITED instead of UNAUTHENTICATED, while a valid key from the same
 * address is served (many clients may share it behind a proxy). A database failure is not the
 * caller's, so it counts nothing.
 */
async function authenticate(
  db: Database,
  authFailures: AuthFailureLimit,
  address: string,
  header: string,
  onFault?: (error: unknown) => unknown,
): Promise<Principal> {
  let key: string | undefined;
  try {
    key = bearerKey(header);
  } catch (error) {
    throw (await authFailures.failed(address)) ?? error;
  }
  const principal = key === undefined ? undefined : await authenticateKey(db, key).catch((e: unknown) => Promise.reject(onFault ? onFault(e) : e));
  if (principal) return principal;
  throw (await authFailures.failed(address)) ?? unauthenticated('the API key is unknown or revoked');
}

/**
 * Read replicas (docs/scale-out.md#read-replicas): queries go to them (the readRouting plugin), a model
 * switch first raises the position they must have replayed, and every status change is logged:
 * a warning when one stops serving, info when it serves again.
 */
function watchReplicas(replicas: ReplicaSet, models: ModelRegistry | undefined, log: Logger): () => void {
  const unswitch = models?.beforeSwitch(() => replicas.raiseFloor());
  const unlisten = replicas.onTransition(({ replica, from, to, report }) => {
    const fields = { replica, from, to, lagMs: report.lagMs, problem: report.problem };
    if (to === 'ok') log.info(fields, `read replica ${replica} serves reads again`);
    else log.warn(fields, `read replica ${replica} is skipped (${to}): ${report.problem ?? to}; its reads go to the primary or another replica`);
  });
  return () => {
    unswitch?.();
    unlisten();
  };
}

/** The server works ingest and re-embedding jobs itself (JOB_WORKERS of them); a job queued here wakes them at once. */
function startWorkers(
  db: Database,
  models: ModelRegistry | undefined,
  config: Config,
  log: Logger,
  finishPendingNow?: () => boolean,
): { stop: () => Promise<void> } {
  const abort = new AbortController();
  const workers = Array.from(
    { length: config.jobWorkers },
    () =>
      new JobWorker(db, models, {
        ...jobWorkerSettings(config),
        log: (m) => log.info(m),
        logger: log,
        finishPendingNow,
        ingest: ingestJobOptions(config),
      }),
  );
  const running = workers.map((w) => w.run({ signal: abort.signal }));
  const unsubscribe = models?.onJobQueued(() => workers.forEach((w) => w.poke())) ?? (() => undefined);
  return {
    stop: async () => {
      unsubscribe();
      abort.abort();
      await Promise.all(running);
    },
  };
}

async function handle(
  server: ApolloServer<Context>,
  req: IncomingMessage,
  res: ServerResponse,
  db: Database,
  config: Config,
  models: ModelRegistry | undefined,
  metrics: ServerMetrics | undefined,
  replicas: ReplicaSet | undefined,
  authFailures: AuthFailureLimit,
  settings: CorpusSettingsSource,
): Promise<void> {
  res.setHeader('access-control-allow-origin', '*');
  // Load shedding: over MAX_IN_FLIGHT the request is refused before its body is read, parsed and
  // validated. The question queue refuses too (QUESTION_QUEUE), but only once a request reaches
  // it, and a burst's requests are all parsed and validated first (2.6 s for 1,000 on 2 cores,
  // over a minute on a loaded machine), so without this bound an overload is refused slowly.
  // This request counts itself (requestStarted ran before); the count is the process's, as the rate limits are.
  if (config.maxInFlight > 0 && requestsInFlight() > config.maxInFlight) {
    metrics?.shed.inc();
    // The body is drained unread, so a keep-alive connection stays usable.
    req.resume();
    sendError(res, new DomainError(ErrorCode.OVERLOADED, `the server has ${config.maxInFlight} requests in flight already (MAX_IN_FLIGHT); retry shortly`));
    return;
  }
  if (req.method === 'OPTIONS') {
    res.setHeader('access-control-allow-methods', 'GET,HEAD,POST');
    const asked = req.headers['access-control-request-headers'];
    if (asked) res.setHeader('access-control-allow-headers', asked);
    res.setHeader('vary', 'Access-Control-Request-Headers');
    res.statusCode = 204;
    res.end();
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') {
    res.setHeader('allow', ALLOWED_METHODS);
    sendError(res, new DomainError(ErrorCode.METHOD_NOT_ALLOWED, `${req.method} is not allowed: send GraphQL operations with POST (or GET for queries)`));
    return;
  }

  let body: unknown;
  if (req.method === 'POST') {
    let raw: Buffer;
    try {
      raw = await readBody(req, config.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      // Close the connection: the rest of the body is not read.
      res.setHeader('connection', 'close');
      sendError(res, error);
      req.resume();
      return;
    }
    const text = raw.toString('utf8');
    if (/^application\/(graphql-response\+)?json\b/i.test(req.headers['content-type'] ?? '') && text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        sendError(res, new DomainError(ErrorCode.BAD_REQUEST, 'the request body is not valid JSON'));
        return;
      }
    } else {
      // Apollo refuses other content types (CSRF prevention first); it sees what was sent.
      body = text;
    }
  }

  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const search = new URL(req.url ?? '/', 'http://localhost').search;
  // For the log line, before anything can refuse the request (a bad key, a limit).
  noteOperationName(
    currentRequest(),
    typeof body === 'object' && body !== null ? (body as { operationName?: unknown }).operationName : new URLSearchParams(search).get('operationName'),
  );
  const request: HTTPGraphQLRequest = {
    // HEAD is GET without the body (node:http leaves the body out of the response).
    method: req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'),
    headers,
    search,
    body,
  };
  const address = req.socket.remoteAddress ?? 'unknown';
  const execute = (reads: ReadsState | undefined) =>
    server.executeHTTPGraphQLRequest({
      httpGraphQLRequest: request,
      context: async () => {
        try {
          const header = headers.get('authorization');
          if (header === undefined) return attachClientAddress({ ...createContext(db, config, models), metrics, reads, settings }, address);
          const principal = await authenticate(db, authFailures, address, header, (e) => contextFault(e, config.statementTimeoutMs, db.location));
          return attachClientAddress({ ...createContext(db, config, models, principal), metrics, reads, settings }, address);
        } catch (error) {
          if (error instanceof DomainError && error.code === ErrorCode.RATE_LIMITED) metrics?.rateLimited.inc({ kind: 'auth' });
          // Outside the request pipeline: Apollo takes the status from the error itself.
          throw toGraphQLError(error);
        }
      },
    });
  // A query whose replica dropped its connection is run again on the primary (queries do not
  // write), and the replica is skipped until its checks find it well again.
  const reads: ReadsState | undefined = replicas ? { primaryOnly: false } : undefined;
  const execution = execute(reads).then((first) => {
    if (!replicas || !reads?.replica || !reads.replicaFailed) return first;
    replicas.markDown(reads.replica);
    return execute({ primaryOnly: true });
  });
  const response = await withDeadline(execution, config.requestTimeoutMs);
  if (response === TIMED_OUT) {
    sendError(res, new DomainError(ErrorCode.TIMEOUT, `the request took longer than ${config.requestTimeoutMs} ms (REQUEST_TIMEOUT_MS)`));
    return;
  }
  for (const [name, value] of response.headers) res.setHeader(name, value);
  res.statusCode = response.status ?? 200;
  if (response.body.kind === 'complete') {
    // A HEAD answer says how long the GET one would be.
    if (req.method === 'HEAD') res.setHeader('content-length', Buffer.byteLength(response.body.string));
    res.end(response.body.string);
    return;
  }
  for await (const chunk of response.body.asyncIterator) res.write(chunk);
  res.end();
}

/** An error shaped like Apollo's, for what is refused before Apollo sees the request. */
function sendError(res: ServerResponse, error: DomainError, extensions: Record<string, unknown> = {}): void {
  writeRefusal(res, error, { errors: [{ message: error.message, extensions: { code: reportedCode(error.code), ...error.details, ...extensions } }] });
}

const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';

/**
 * Requests node:http cannot parse never reach the handler: a header block over maxHeaderSize
 * (431), an invalid Content-Length (400), a method it does not know (501), a request that took
 * too long to arrive (408). Node would answer them with an empty body; they get the API's JSON
 * error shape and a request id here, then the connection is closed (the parser cannot go on).
 */
function refuseMalformed(error: Error & { code?: string }, socket: Duplex, log: Logger): void {
  // A response already under way on this connection (a pipelined request) cannot be followed by another.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = clientErrorAnswer(error.code);
  const requestId = newRequestId();
  const body = JSON.stringify({ errors: [{ message, extensions: { code } }] });
  const head = [
    `HTTP/1.1 ${status} ${reason}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    ...(status === 501 ? [`allow: ${ALLOWED_METHODS}`] : []),
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  log.info({ requestId, status, parseError: error.code }, 'request refused unparsed');
}

function clientErrorAnswer(parseError: string | undefined): [number, string, ErrorCode, string] {
  switch (parseError) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', ErrorCode.BAD_REQUEST, `the request's headers are over the limit of ${maxHeaderSize} bytes`];
    case 'HPE_INVALID_METHOD':
      return [
        501,
        'Not Implemented',
        ErrorCode.BAD_REQUEST,
        `the request method is not one this server knows: send GraphQL operations with POST (or GET for queries)`,
      ];
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return [400, 'Bad Request', ErrorCode.BAD_REQUEST, 'the Content-Length header is not a valid length'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', ErrorCode.TIMEOUT, 'the request did not arrive in time'];
    default:
      return [400, 'Bad Request', ErrorCode.BAD_REQUEST, 'the request is not valid HTTP/1.1'];
  }
}

function urlOf(httpServer: Server): string {
  const address = httpServer.address();
  if (address === null || typeof address === 'string') throw new Error('server is not listening on a TCP port');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shown = host === '0.0.0.0' || host === '[::]' ? 'localhost' : host;
  return `http://${shown}:${address.port}/`;
}
