import { getIntrospectionQuery, parse } from 'graphql';
import { loadConfig } from '../src/config';
import { estimateOperation } from '../src/graphql/limits';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { createTestApi, type TestApi } from './helpers/api';
import { useTestServer } from './helpers/server';

// README examples: the defaults must let them through.
const README_QUERIES = [
  `{ stats { documents sections passages links } embeddingModels { name dimension roles documents passages } }`,
  `{ retrieve(question: "What is the capital of Norway?", k1: 20, k2: 5, lambda: 1.0) {
      passages { rank score passageScore documentScore passage { text titlePath document { title } } }
      documents { rank score document { title } }
      timings { encodeMs searchMs totalMs } } }`,
  `{ documents(first: 3, titleContains: "germ") { totalCount edges { cursor node { id key title passageCount } }
       pageInfo { hasNextPage endCursor } }
     document(key: "factbook/europe/gm") { title summary toc { id title depth titlePath }
       sections { title children { title passages { id text } } } } }`,
  `query($id: ID!) { passage(id: $id) { text titlePath wordCount section { title parent { title } } document { title }
       previous { text } next { text } } }`,
];

// Every document's sections' subsections' passages, each with its document's whole table of contents.
const EXPENSIVE = `{ documents(first: 100) { edges { node { sections { children { passages { text document { toc { title } } } } } } } } }`;

describe('query depth and cost', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await createTestApi();
  });
  afterAll(() => api.close());

  it('lets the README examples and a full introspection query through the defaults', async () => {
    const schema = await buildGraphQLSchema();
    for (const query of README_QUERIES) {
      const { depth, cost } = estimateOperation(schema, parse(query), { id: '1' });
      expect(depth).toBeLessThanOrEqual(api.config.maxQueryDepth);
      expect(cost).toBeLessThanOrEqual(api.config.maxQueryCost);
    }
    const result = await api.exec(README_QUERIES[2]);
    expect(result.errors).toBeUndefined();
    const introspection = await api.exec(getIntrospectionQuery());
    expect(introspection.errors).toBeUndefined();
  });

  it('estimates cost from fields and list sizes, variables and fragments included', async () => {
    const schema = await buildGraphQLSchema();
    const cost = (query: string, variables?: Record<string, unknown>) => estimateOperation(schema, parse(query), variables).cost;
    expect(cost(`{ stats { documents passages } }`)).toBe(3);
    // documents + first × (edges + 1 × (node + title)): the edges list is the page itself.
    expect(cost(`{ documents(first: 5) { edges { node { title } } } }`)).toBe(1 + 5 * (1 + 1 * (1 + 1)));
    expect(cost(`query($n: Int) { documents(first: $n) { edges { node { title } } } }`, { n: 50 })).toBe(1 + 50 * 3);
    // No `first`: the default page of 20.
    expect(cost(`{ documents { edges { node { title } } } }`)).toBe(1 + 20 * 3);
    // A list with no size argument counts 10 items.
    expect(cost(`{ document(key: "k") { sections { title } } }`)).toBe(1 + (1 + 10 * 1));
    expect(cost(`fragment S on Section { title } { document(key: "k") { sections { ...S } } }`)).toBe(12);
    // retrieve: its larger k sizes the lists under it (k1 defaults to 100).
    expect(cost(`{ retrieve(question: "q", k2: 5) { passages { rank } } }`)).toBe(1 + 100 * (1 + 1 * 1));
    expect(cost(`{ __typename stats { __typename documents } }`)).toBe(2);
  });

  it('refuses an expensive nested query with QUERY_TOO_COSTLY naming the limit and the value', async () => {
    const result = await api.exec(EXPENSIVE);
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0].extensions?.code).toBe('QUERY_TOO_COSTLY');
    const { cost } = estimateOperation(await buildGraphQLSchema(), parse(EXPENSIVE));
    expect(cost).toBeGreaterThan(api.config.maxQueryCost);
    expect(result.errors![0].message).toBe(
      `query cost ${cost} is over the limit of ${api.config.maxQueryCost} (MAX_QUERY_COST); ask for smaller pages (first, k1, k2) or fewer nested lists`,
    );
    // The same shape with a small page is fine.
    expect((await api.exec(EXPENSIVE.replace('first: 100', 'first: 2'))).errors).toBeUndefined();
  });

  it('refuses a query deeper than MAX_QUERY_DEPTH with QUERY_TOO_DEEP', async () => {
    // passage → next → next …: single objects, so only the depth grows.
    const deep = (levels: number) => `{ passage(id: "1") { ${'next { '.repeat(levels)}text${' }'.repeat(levels)} } }`;
    expect(estimateOperation(await buildGraphQLSchema(), parse(deep(11))).depth).toBe(13);
    const tooDeep = await api.exec(deep(11));
    expect(tooDeep.errors?.[0].extensions?.code).toBe('QUERY_TOO_DEEP');
    expect(tooDeep.errors?.[0].message).toBe('query depth 13 is over the limit of 12 (MAX_QUERY_DEPTH)');
    expect(await api.exec(deep(10))).toEqual({ data: { passage: null } });
  });

  it('takes the limits from MAX_QUERY_DEPTH and MAX_QUERY_COST', async () => {
    const strict = await createTestApi({ MAX_QUERY_DEPTH: '2', MAX_QUERY_COST: '10' });
    try {
      expect((await strict.exec(`{ stats { documents } }`)).errors).toBeUndefined();
      const deep = await strict.exec(`{ document(key: "k") { sections { title } } }`);
      expect(deep.errors?.[0].message).toBe('query depth 3 is over the limit of 2 (MAX_QUERY_DEPTH)');
      const costly = await strict.exec(`{ documents(first: 10) { totalCount } }`);
      expect(costly.errors?.[0].extensions?.code).toBe('QUERY_TOO_COSTLY');
      expect(costly.errors?.[0].message).toMatch(/^query cost 11 is over the limit of 10 \(MAX_QUERY_COST\)/);
    } finally {
      await strict.close();
    }
    expect(() => loadConfig({ MAX_QUERY_COST: '0' })).toThrow(/MAX_QUERY_COST must be an integer from 1/);
  });

  it('caps the documents in one ingestDocuments at MAX_INGEST_BATCH with BAD_USER_INPUT', async () => {
    const small = await createTestApi({ MAX_INGEST_BATCH: '2' });
    try {
      const docs = [1, 2, 3].map((i) => ({ title: `D${i}`, text: 'x' }));
      const result = await small.exec(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }`, { d: docs });
      expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'documents' });
      expect(result.errors?.[0].message).toBe('documents has 3 items, over the limit of 2 per request');
      const ok = await small.exec(`mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }`, { d: docs.slice(0, 2) });
      expect(ok.data?.ingestDocuments.created).toBe(2);
    } finally {
      await small.close();
    }
  });
});

describe('HTTP limits', () => {
  const LIMIT = 4096;
  const server = useTestServer({ MAX_BODY_BYTES: String(LIMIT) });
  const auth = () => ({ authorization: `Bearer ${server.adminKey}` });
  const json = { 'content-type': 'application/json' };

  it('answers a body over MAX_BODY_BYTES with 413 and a GraphQL-shaped PAYLOAD_TOO_LARGE error', async () => {
    const body = JSON.stringify({ query: '{ stats { documents } }', variables: { pad: 'x'.repeat(LIMIT) } });
    const response = await fetch(server.url, { method: 'POST', headers: { ...json, ...auth() }, body });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: `request body of ${Buffer.byteLength(body)} bytes is over the limit of ${LIMIT} bytes (MAX_BODY_BYTES)`,
          extensions: { code: 'PAYLOAD_TOO_LARGE' },
        },
      ],
    });
  });

  it('refuses a chunked body (no Content-Length) once it passes the limit', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = await fetch(server.url, { method: 'POST', headers: json, body: stream, duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
    const body = (await response.json()) as any;
    expect(body.errors[0]).toEqual({
      message: `request body is over the limit of ${LIMIT} bytes (MAX_BODY_BYTES)`,
      extensions: { code: 'PAYLOAD_TOO_LARGE' },
    });
  });

  it('serves a body just under the limit', async () => {
    const body = JSON.stringify({ query: '{ stats { documents } }', variables: { pad: 'x'.repeat(LIMIT - 100) } });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(LIMIT);
    const response = await fetch(server.url, { method: 'POST', headers: json, body });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { stats: { documents: 0 } } });
  });

  it('refuses batched requests (an array of operations)', async () => {
    const body = JSON.stringify([{ query: '{ stats { documents } }' }, { query: '{ stats { passages } }' }]);
    const response = await fetch(server.url, { method: 'POST', headers: { ...json, ...auth() }, body });
    expect(response.status).toBe(400);
    const reply = (await response.json()) as any;
    expect(reply.errors[0].message).toBe('Operation batching disabled.');
    expect(reply.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('refuses a body that is not JSON with 400 BAD_REQUEST', async () => {
    const response = await fetch(server.url, { method: 'POST', headers: json, body: '{"query": ' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0]).toEqual({ message: 'the request body is not valid JSON', extensions: { code: 'BAD_REQUEST' } });
  });

  describe('CSRF prevention', () => {
    const mutation = `mutation { deleteDocument(id: "1") }`;

    it('refuses a text/plain POST (a simple cross-site request) even with an admin key', async () => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', ...auth() },
        body: JSON.stringify({ query: mutation }),
      });
      expect(response.status).toBe(400);
      expect(await response.text()).toMatch(/CSRF/);
      expect(await server.db.query('SELECT 1 FROM documents')).toEqual([]);
    });

    it('refuses a GET without a preflight header, mutation or query', async () => {
      for (const query of [mutation, '{ stats { documents } }']) {
        const response = await fetch(`${server.url}?query=${encodeURIComponent(query)}`, { headers: auth() });
        expect(response.status).toBe(400);
        expect(await response.text()).toMatch(/CSRF/);
      }
    });

    it('serves a GET query with the preflight header, never a GET mutation', async () => {
      const preflight = { 'apollo-require-preflight': 'true', ...auth() };
      const query = await fetch(`${server.url}?query=${encodeURIComponent('{ stats { documents } }')}`, { headers: preflight });
      expect(query.status).toBe(200);
      expect(await query.json()).toEqual({ data: { stats: { documents: 0 } } });
      const write = await fetch(`${server.url}?query=${encodeURIComponent(mutation)}`, { headers: preflight });
      expect(write.status).toBe(405);
    });
  });

  it('still serves the landing page on GET and answers CORS preflight', async () => {
    const page = await fetch(server.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const options = await fetch(server.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://studio.apollographql.com', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-origin')).toBe('*');
    expect(options.headers.get('access-control-allow-headers')).toBe('authorization,content-type');
  });

  it('refuses MAX_BODY_BYTES out of range; by default a request holds the largest document ingest accepts', () => {
    const config = loadConfig({});
    expect(config.maxBodyBytes).toBe(4 * 1024 * 1024);
    // Text with quotes and newlines: JSON escaping makes the body larger than the document.
    const text = 'A "quoted" line.\n'.repeat(Math.floor(config.ingest.maxDocumentBytes / 17));
    const body = JSON.stringify({
      query: 'mutation($d: [DocumentInput!]!) { ingestDocuments(documents: $d) { created } }',
      variables: { d: [{ key: 'big', title: 'Big', text }] },
    });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(config.ingest.maxDocumentBytes);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(config.maxBodyBytes);
    expect(() => loadConfig({ MAX_BODY_BYTES: '10' })).toThrow(/MAX_BODY_BYTES must be an integer from 1024/);
  });
});
