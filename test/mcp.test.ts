import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config';
import { packageRoot } from '../src/paths';
import { ingest } from '../src/pipeline/ingest';
import { startServer } from '../src/server';
import type { Database } from '../src/store/db';
import { createApiKey } from '../src/store/keys';
import { migrate } from '../src/store/migrate';
import { cliEntry } from './helpers/cli-entry';
import { createProcessStore, type ProcessStore } from './helpers/database';
import { captureLog } from './helpers/log-capture';
import { useTestServer } from './helpers/server';

/**
 * The MCP server through the SDK's own Client, over Streamable HTTP (/mcp on the running server)
 * and stdio (`dhr mcp` as a child process): the tools listed per role, each called, bad arguments
 * refused as tool errors naming the argument, and /mcp's keys as /graphql's.
 */

const paragraph = (topic: string, n: number) => `${topic} fact number ${n} is written here in a few plain words.`;
const CORPUS = [
  {
    key: 'volcanoes',
    markdown: [
      '# Volcanoes',
      'Volcanoes are openings in the crust of a planet.',
      '## Eruptions',
      ...[1, 2, 3, 4].map((n) => paragraph('Lava eruption', n)),
      '## Monitoring',
      ...[1, 2].map((n) => paragraph('Seismometer monitoring', n)),
    ].join('\n\n'),
  },
  {
    key: 'glaciers',
    markdown: ['# Glaciers', 'Glaciers are rivers of ice.', '## Retreat', ...[1, 2].map((n) => paragraph('Glacier retreat', n))].join('\n\n'),
  },
];
const NEW_DOCUMENT = '# Geysers\n\nGeysers spout hot water.\n\n## Old Faithful\n\nOld Faithful erupts about every ninety minutes.';

const READER_TOOLS = ['search', 'get_document', 'get_section', 'get_passage', 'list_documents'];
const ADMIN_TOOLS = [...READER_TOOLS, 'ingest', 'job_status'];

/** Short paragraphs, a few words a passage: sections of several passages to merge and to read around. */
async function seed(db: Database): Promise<void> {
  const result = await ingest(db, CORPUS, { ...loadConfig({}).ingest, maxWords: 12 });
  expect(result.failed).toBe(0);
}

type Json = Record<string, any>;

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A call that must succeed: its structured content (the same JSON as its text). */
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const result = await call(client, name, args);
  const text = (result.content[0] as { text: string }).text;
  if (result.isError) throw new Error(`${name} failed: ${text}`);
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent as Json;
}

/** A call that must be refused: the tool error's text (never a stack trace). */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, name, args);
  expect(result.isError).toBe(true);
  const text = (result.content[0] as { text: string }).text;
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
  return text;
}

/** Every reader tool, called as an agent would: search, then read around its citations. */
async function readerRoundTrip(client: Client): Promise<void> {
  const found = await ok(client, 'search', { question: 'lava eruption', mode: 'LEXICAL', k: 6, tokens: 2000 });
  expect(found.mode).toBe('LEXICAL');
  expect(found.blocks.length).toBeGreaterThan(0);
  expect(found.tokens).toBeLessThanOrEqual(2000);
  const [top] = found.blocks;
  expect(top.document.key).toBe('volcanoes');
  expect(top.titlePath).toEqual(['Volcanoes', 'Eruptions']);
  // Each block cites its passages, in reading order, and no passage twice.
  const cited = found.blocks.flatMap((b: Json) => b.passageIds);
  expect(new Set(cited).size).toBe(cited.length);
  const parts: Json[] = [];
  for (const id of top.passageIds) parts.push((await ok(client, 'get_passage', { id, window: 0 })).passage);
  expect(parts.map((p) => p.ordinal)).toEqual([...parts.map((p) => p.ordinal)].sort((a, b) => a - b));
  expect(top.text).toBe(parts.map((p) => p.text).join('\n\n'));

  const document = await ok(client, 'get_document', { key: 'volcanoes' });
  expect(document.toc.map((s: Json) => s.title)).toEqual(['Eruptions', 'Monitoring']);
  expect((await ok(client, 'get_document', { id: document.id })).key).toBe('volcanoes');
  const eruptions = await ok(client, 'get_section', { id: document.toc[0].id });
  expect(eruptions.document.key).toBe('volcanoes');
  expect(eruptions.passages.length).toBeGreaterThanOrEqual(3);
  expect(eruptions.passages.map((p: Json) => p.text).join(' ')).toContain('Lava eruption fact number 4');

  // The context's options reach it: one hit grown into its whole section.
  const grown = await ok(client, 'search', { question: 'lava eruption', mode: 'LEXICAL', k: 1, expand: 'SECTION' });
  expect(grown.blocks.map((b: Json) => b.passageIds)).toEqual([eruptions.passages.map((p: Json) => p.id)]);
  // A documents-only mode ranks documents, and builds no blocks.
  const ranked = await ok(client, 'search', { question: 'lava eruption', mode: 'LEXICAL_DOCUMENTS' });
  expect(ranked.blocks).toEqual([]);
  expect(ranked.documents[0]).toMatchObject({ rank: 1, key: 'volcanoes' });

  const middle = eruptions.passages[1];
  const around = await ok(client, 'get_passage', { id: middle.id, window: 1 });
  expect(around.passage.text).toBe(middle.text);
  expect(around.before.map((p: Json) => p.ordinal)).toEqual([middle.ordinal - 1]);
  expect(around.after.map((p: Json) => p.ordinal)).toEqual([middle.ordinal + 1]);
  // At the document's start the window holds what there is.
  expect((await ok(client, 'get_passage', { id: (await ok(client, 'get_passage', { id: middle.id, window: 10 })).before[0].id, window: 2 })).before).toEqual(
    [],
  );

  const first = await ok(client, 'list_documents', { first: 1 });
  expect(first.totalCount).toBe(2);
  expect(first.documents).toHaveLength(1);
  expect(first.pageInfo.hasNextPage).toBe(true);
  const second = await ok(client, 'list_documents', { first: 1, after: first.pageInfo.endCursor });
  // Ingest order: on PostgreSQL the two documents are written concurrently, so either comes first.
  expect([...first.documents, ...second.documents].map((d: Json) => d.key).sort()).toEqual(['glaciers', 'volcanoes']);
  expect(second.pageInfo.hasNextPage).toBe(false);
}

/** Bad arguments: refused as tool errors that name the argument; an unknown tool too. */
async function badArguments(client: Client): Promise<void> {
  expect(await refused(client, 'search', { question: 'lava', k: 0 })).toMatch(/\bat k\b/);
  expect(await refused(client, 'search', { question: 'lava', colour: 'red' })).toContain('"colour"');
  expect(await refused(client, 'search', { question: 'lava', tokens: -5 })).toMatch(/\bat tokens\b/);
  // A budget below the smallest block: the context's own refusal, typed.
  expect(await refused(client, 'search', { question: 'lava eruption', mode: 'LEXICAL', tokens: 1 })).toMatch(/^BAD_USER_INPUT: .*\(argument: tokens\)$/);
  expect(await refused(client, 'search', { question: 'lava', mode: 'LEXICAL', window: 2 })).toMatch(/\(argument: window\)$/);
  expect(await refused(client, 'get_passage', { id: 'x', window: 11 })).toMatch(/\bat window\b/);
  const document = await ok(client, 'get_document', { key: 'glaciers' });
  // A document's id where a passage's is expected.
  expect(await refused(client, 'get_passage', { id: document.id })).toMatch(/^BAD_USER_INPUT: .*Document id where a Passage id.*\(argument: id\)$/);
  expect(await refused(client, 'get_document', { id: document.id, key: 'glaciers' })).toMatch(
    /^BAD_USER_INPUT: give exactly one of id or key \(argument: key\)$/,
  );
  expect(await refused(client, 'get_document', { key: 'nothing here' })).toMatch(/^NOT_FOUND: .*\(argument: key\)$/);
  expect(await refused(client, 'list_documents', { after: 'not a cursor' })).toMatch(/\(argument: after\)$/);
  expect(await refused(client, 'no_such_tool', {})).toContain('no_such_tool');
}

/** ingest (a Markdown document as a job) and job_status until the job's workers are done with it. */
async function adminRoundTrip(client: Client): Promise<void> {
  const queued = await ok(client, 'ingest', { documents: [{ format: 'markdown', text: NEW_DOCUMENT, key: 'geysers', source: 'mcp' }] });
  expect(queued.job.documents.total).toBe(1);
  let status: Json = {};
  for (let i = 0; i < 200; i++) {
    status = await ok(client, 'job_status', { id: queued.job.id });
    if (!['queued', 'running'].includes(status.job.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect(status.job.status).toBe('succeeded');
  expect(status.failures).toEqual([]);
  const geysers = await ok(client, 'get_document', { key: 'geysers' });
  expect(status.outcomes.map((o: Json) => o.documentId)).toEqual([geysers.id]);
  expect(geysers.toc.map((s: Json) => s.title)).toEqual(['Old Faithful']);
  expect(await refused(client, 'ingest', { documents: [] })).toMatch(/\bat documents\b/);
  expect(await refused(client, 'ingest', { documents: [{ format: 'docx', text: 'x' }] })).toMatch(/\bat documents\[0\]\.format\b/);
  expect(await refused(client, 'job_status', { id: 999_999 })).toMatch(/^NOT_FOUND: .*\(argument: id\)$/);
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name);

describe('MCP over Streamable HTTP (/mcp)', () => {
  const server = useTestServer({ MCP_ENABLED: 'true', JOB_POLL_MS: '50' });
  let readerKey = '';
  const clients: Client[] = [];
  const others: (() => Promise<void>)[] = [];

  async function connect(url: string, key?: string): Promise<Client> {
    const client = new Client({ name: 'dhr-test', version: '1.0.0' });
    const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers } }));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    await seed(server.db);
    readerKey = (await createApiKey(server.db, { role: 'reader', name: 'agent' })).key;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const stop of others) await stop();
  });

  it('offers a reader the reader tools with strict, typed input schemas, and answers each', async () => {
    const client = await connect(server.url, readerKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(READER_TOOLS);
    const search = tools.find((t) => t.name === 'search')!;
    expect(search.inputSchema).toMatchObject({ type: 'object', required: ['question'], additionalProperties: false });
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['question', 'mode', 'k', 'tokens', 'expand']));
    expect(search.annotations?.readOnlyHint).toBe(true);
    await readerRoundTrip(client);
    await badArguments(client);
    // The admin tools are not there for a reader.
    expect(await refused(client, 'ingest', { documents: [{ format: 'markdown', text: NEW_DOCUMENT }] })).toContain('ingest');
  });

  it('offers an admin key ingest and job_status', async () => {
    const client = await connect(server.url, server.adminKey);
    expect(await names(client)).toEqual(ADMIN_TOOLS);
    await adminRoundTrip(client);
  });

  it('refuses a missing key where READ_ACCESS=key, and a bad key anywhere, as /graphql does', async () => {
    const log = captureLog();
    const closed = await startServer(server.db, loadConfig({ PORT: '0', MCP_ENABLED: 'true', READ_ACCESS: 'key' }), undefined, {
      logDestination: log.destination,
    });
    others.push(closed.stop);
    const missing = await connect(closed.url).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(StreamableHTTPError);
    expect((missing as StreamableHTTPError).code).toBe(401);
    expect((missing as Error).message).toContain('READ_ACCESS=key');
    const wrong = await connect(server.url, 'dhr_not_a_key').catch((error: unknown) => error);
    expect((wrong as StreamableHTTPError).code).toBe(401);
    expect((wrong as Error).message).toContain('unknown or revoked');
    // With a key it serves; without one on a public server, the reader tools.
    expect(await names(await connect(closed.url, readerKey))).toEqual(READER_TOOLS);
    expect(await names(await connect(server.url))).toEqual(READER_TOOLS);
  });

  it('counts tool calls against the rate limits, per key', async () => {
    const log = captureLog();
    const limited = await startServer(server.db, loadConfig({ PORT: '0', MCP_ENABLED: 'true', RATE_LIMIT_QUERIES: '2' }), undefined, {
      logDestination: log.destination,
    });
    others.push(limited.stop);
    const client = await connect(limited.url, readerKey);
    for (let i = 0; i < 2; i++) await ok(client, 'get_document', { key: 'glaciers' });
    expect(await refused(client, 'get_document', { key: 'glaciers' })).toMatch(/^RATE_LIMITED: .*RATE_LIMIT_QUERIES/);
    // Another key has its own budget.
    expect((await ok(await connect(limited.url, server.adminKey), 'get_document', { key: 'glaciers' })).key).toBe('glaciers');
  });

  it('answers POST only, and a body that is not JSON as a JSON-RPC parse error', async () => {
    const get = await fetch(new URL('/mcp', server.url), { headers: { accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as Json).error).toMatchObject({ code: -32000, data: { code: 'BAD_REQUEST' } });
    const garbled = await fetch(new URL('/mcp', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":' });
    expect(garbled.status).toBe(400);
    expect(((await garbled.json()) as Json).error).toMatchObject({ code: -32700, data: { code: 'BAD_REQUEST' } });
  });

  it('is off unless MCP_ENABLED, saying so', async () => {
    const log = captureLog();
    const off = await startServer(server.db, loadConfig({ PORT: '0' }), undefined, { logDestination: log.destination });
    others.push(off.stop);
    const response = await fetch(new URL('/mcp', off.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(404);
    expect(((await response.json()) as Json).error.message).toContain('MCP_ENABLED=true');
  });
});

describe('MCP over stdio (dhr mcp)', () => {
  const work = mkdtempSync(join(tmpdir(), 'dhr-mcp-'));
  let store: ProcessStore;
  let adminKey = '';
  let client: Client | undefined;

  beforeAll(async () => {
    store = await createProcessStore(work);
    const { db, close } = await store.open();
    try {
      await migrate(db);
      await seed(db);
      adminKey = (await createApiKey(db, { role: 'admin', name: 'local agent' })).key;
    } finally {
      // PGlite: the child opens the folder itself.
      await close();
    }
  });
  afterAll(async () => {
    await client?.close();
    await store?.drop();
    rmSync(work, { recursive: true, force: true });
  });

  it('serves the same tools to an agent that starts it, an admin key adding the admin tools', async () => {
    client = new Client({ name: 'dhr-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...cliEntry(), 'mcp'],
      cwd: packageRoot(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...store.env, DHR_API_KEY: adminKey, JOB_POLL_MS: '50' },
      stderr: 'pipe',
    });
    // Drained, so a chatty child never blocks on a full pipe; shown when the test fails.
    const stderr: string[] = [];
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    await client.connect(transport).catch((error: unknown) => Promise.reject(new Error(`${String(error)}\n${stderr.join('')}`)));
    expect(await names(client)).toEqual(ADMIN_TOOLS);
    await readerRoundTrip(client);
    await badArguments(client);
    await adminRoundTrip(client);
    // With encoders: the default mode, and blocks counted with the passage encoder's tokenizer.
    const found = await ok(client, 'search', { question: 'How often does Old Faithful erupt?', k: 3 });
    expect(found.mode).toBe('HYBRID_HIERARCHICAL');
    expect(found.tokenizer).not.toMatch(/^approximate/);
    expect(found.blocks[0].document.key).toBe('geysers');
  });
});
