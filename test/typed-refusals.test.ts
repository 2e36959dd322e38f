/**
 * Requests the server refuses outside the happy path, each with a typed answer over real HTTP:
 * persisted queries it cannot use, subscriptions, methods it does not serve, requests node:http
 * cannot parse, and a flood of wrong API keys (RATE_LIMIT_AUTH_FAILURES).
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { useTestServer } from './helpers/server';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** node:http rather than fetch: any method, and a source address of our choosing (another client). */
function send(url: string, options: { method?: string; path?: string; headers?: Record<string, string>; body?: unknown; from?: string } = {}): Promise<Reply> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const target = new URL(options.path ?? '/', url);
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: options.method ?? 'POST',
        localAddress: options.from,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: text ? JSON.parse(text) : undefined }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Bytes node:http would refuse to parse, and the raw answer. */
function raw(url: string, bytes: string): Promise<{ status: number; head: string; body: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = answer.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) });
    });
  });
}

const STATS = '{ stats { documents } }';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (version: number, hash: string) => ({ persistedQuery: { version, sha256Hash: hash } });

describe('typed refusals over HTTP', () => {
  const server = useTestServer({ RATE_LIMIT_AUTH_FAILURES: '5' });

  it('types every persisted-query refusal and serves persisted queries', async () => {
    const mismatched = await send(server.url, { body: { query: STATS, extensions: persisted(1, 'abc') } });
    expect(mismatched.status).toBe(400);
    expect(mismatched.body.errors[0]).toEqual({ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST' } });
    const version2 = await send(server.url, { body: { query: STATS, extensions: persisted(2, 'abc') } });
    expect(version2.status).toBe(400);
    expect(version2.body.errors[0]).toEqual({ message: 'Unsupported persisted query version', extensions: { code: 'BAD_REQUEST' } });
    const overGet = await send(server.url, {
      method: 'GET',
      path: `/?query=${encodeURIComponent(STATS)}&extensions=${encodeURIComponent(JSON.stringify(persisted(1, 'abc')))}`,
      headers: { 'apollo-require-preflight': '1' },
    });
    expect(overGet.status).toBe(400);
    expect(overGet.body.errors[0].extensions.code).toBe('BAD_REQUEST');

    // Automatic persisted queries: an unknown hash asks for the query (200, as APQ clients expect),
    // the query registers under its hash, and the hash alone serves it from then on, over GET too.
    const hash = sha256(STATS);
    const unknown = await send(server.url, { body: { extensions: persisted(1, hash) } });
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await send(server.url, { body: { query: STATS, extensions: persisted(1, hash) } })).body).toEqual({ data: { stats: { documents: 0 } } });
    const byHash = await send(server.url, {
      method: 'GET',
      path: `/?extensions=${encodeURIComponent(JSON.stringify(persisted(1, hash)))}`,
      headers: { 'apollo-require-preflight': '1' },
    });
    expect(byHash.body).toEqual({ data: { stats: { documents: 0 } } });
  });

  it('refuses subscriptions as a bad request', async () => {
    const reply = await send(server.url, { body: { query: 'subscription { stats { documents } }' } });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      errors: [{ message: 'subscriptions are not supported: this API answers queries and mutations over HTTP', extensions: { code: 'BAD_REQUEST' } }],
    });
  });

  it('answers HEAD like GET without a body, and other methods with a JSON error', async () => {
    const get = await send(server.url, { method: 'GET', headers: { 'apollo-require-preflight': '1' } });
    const head = await send(server.url, { method: 'HEAD', headers: { 'apollo-require-preflight': '1' } });
    expect(get.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(head.status).toBe(get.status);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.text));
    expect(head.text).toBe('');

    const put = await send(server.url, { method: 'PUT', body: { query: STATS } });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    expect(put.body.errors[0]).toEqual({
      message: 'PUT is not allowed: send GraphQL operations with POST (or GET for queries)',
      extensions: { code: 'BAD_REQUEST' },
    });
    const health = await send(server.url, { method: 'POST', path: '/healthz' });
    expect(health.status).toBe(405);
    expect(health.headers.allow).toBe('GET, HEAD');
    expect(health.body).toEqual({ errors: [{ message: 'POST is not allowed here; use GET', extensions: { code: 'BAD_REQUEST' } }] });
    // node:http cannot parse these; the server still answers in JSON, then closes the connection.
    const foo = await raw(server.url, 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(foo.status).toBe(501);
    expect(foo.head).toContain('allow: get, head, post, options');
    expect(foo.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const header = await raw(server.url, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    expect(header.status).toBe(431);
    expect(header.head).toContain('content-type: application/json');
    expect(header.body).toEqual({ errors: [{ message: "the request's headers are over the limit of 16384 bytes", extensions: { code: 'BAD_REQUEST' } }] });
    const length = await raw(server.url, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n');
    expect(length.status).toBe(400);
    expect(length.body).toEqual({ errors: [{ message: 'the Content-Length header is not a valid length', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('limits wrong keys per address, lets a valid key from that address through, and logs the operation name', async () => {
    // 127.0.0.2 guesses keys; 127.0.0.1 is another client (Linux routes all of 127/8 to loopback).
    const from2 = (key: string) =>
      send(server.url, { from: '127.0.0.2', headers: { authorization: `Bearer ${key}` }, body: { query: `query Probe ${STATS}`, operationName: 'Probe' } });
    for (let i = 0; i < 5; i++) {
      const reply = await from2(`dhr_wrong${i}`);
      expect(reply.status).toBe(401);
      expect(reply.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    // Over the budget of 5: a wrong key, well-formed or not, is refused as a guess.
    for (const key of [`dhr_${'x'.repeat(43)}`, 'dhr_wrong5']) {
      const refused = await from2(key);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: Number(refused.headers['retry-after']) });
      expect(refused.body.errors[0].message).toMatch(
        /^too many failed authentications from this address: the limit is 5 per 60 s \(RATE_LIMIT_AUTH_FAILURES\)/,
      );
    }
    // A valid key from the same address (another client behind the same proxy) is served,
    // and does not clear the address's count of guesses.
    const valid = await from2(server.adminKey);
    expect(valid.status).toBe(200);
    expect(valid.body).toEqual({ data: { stats: { documents: 0 } } });
    expect((await from2('dhr_wrong6')).status).toBe(429);

    const other = await send(server.url, { from: '127.0.0.1', headers: { authorization: `Bearer ${server.adminKey}` }, body: { query: STATS } });
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ data: { stats: { documents: 0 } } });

    // Refused in the context, before Apollo resolved the operation: the log line still names it.
    const lines = server.logs.filter((l) => l.msg === 'request' && l.operationName === 'Probe');
    expect(lines.map((l) => l.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 200, 429]);
  });
});
