import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleHandler, consoleDir, CONSOLE_CSP } from '../src/http/console';
import { useTestServer } from './helpers/server';

/** The console's routes on the real server (the bundle from `npm ci`'s build:console); GraphQL keeps the rest. */

const html = { accept: 'text/html,application/xhtml+xml' };

describe('console routes', () => {
  const server = useTestServer();

  it('serves the console at / to browsers, with a CSP of self', async () => {
    const response = await fetch(server.url, { headers: html });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    const page = await response.text();
    expect(page).toContain('<script src="/console/console.js">');
    // Nothing is fetched from elsewhere.
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves GraphiQL and the bundled assets', async () => {
    expect(await (await fetch(`${server.url}graphiql`, { headers: html })).text()).toContain('/console/graphiql.js');
    const script = await fetch(`${server.url}console/console.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await script.text()).length).toBeGreaterThan(1000);
  });

  it('answers 404 for files that are not in the bundle, paths outside it included', async () => {
    for (const path of ['console/nope.js', 'console/..%2F..%2Fpackage.json', 'console/../package.json']) {
      const response = await fetch(`${server.url}${path}`);
      expect([404, 400]).toContain(response.status);
      expect(await response.text()).not.toContain('"name"');
    }
  });

  it('leaves GraphQL where it was: POST /, GET / without HTML, and the landing page is off', async () => {
    expect((await server.post('{ stats { documents } }')).body).toEqual({ data: { stats: { documents: 0 } } });
    const api = await fetch(server.url, { headers: { accept: 'application/json' } });
    expect(api.headers.get('content-type')).not.toMatch(/text\/html/);
    expect(api.headers.get('content-security-policy')).toBeNull();
  });
});

describe('console without a bundle', () => {
  it('says how to build it instead of failing', async () => {
    const handle = consoleHandler(mkdtempSync(join(tmpdir(), 'dhr-no-console-')));
    const http = createServer((req, res) => {
      if (!handle(req, res)) res.end('graphql');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const { port } = http.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: html });
    expect(response.status).toBe(503);
    expect(await response.text()).toMatch(/npm run build:console/);
    await new Promise((resolve) => http.close(resolve));
    expect(consoleDir()).toMatch(/dist[\\/]console$/);
  });
});
