import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join } from 'node:path';
import { packageRoot } from '../paths';

/** Where `npm run build:console` (scripts/build-console.mjs) writes the bundle. */
export const consoleDir = (): string => join(packageRoot(), 'dist', 'console');

// The few types the bundle contains; a table of six is clearer than a dependency.
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Everything the console loads comes from this server: scripts, styles and fonts from 'self',
 * requests to 'self' only. Inline style attributes are allowed (CodeMirror positions its cursor
 * with them); inline scripts are not.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/**
 * Serves the console (`/`, for browsers), GraphiQL (`/graphiql`) and their assets (`/console/…`).
 * Answers true when it took the request; GraphQL keeps every other request, including GET `/`
 * with `?query=` and any request that does not accept HTML. Files are read once, at the first
 * request, so a request never touches the disk and no path from a client reaches the file system.
 */
export function consoleHandler(dir: string = consoleDir()): (req: IncomingMessage, res: ServerResponse) => boolean {
  let files: Map<string, Buffer> | null | undefined;
  const load = (): Map<string, Buffer> | null => {
    if (files !== undefined) return files;
    if (!existsSync(join(dir, 'index.html'))) return (files = null);
    files = new Map(
      readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && TYPES[extname(e.name)])
        .map((e) => [e.name, readFileSync(join(dir, e.name))]),
    );
    return files;
  };

  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = new URL(req.url ?? '/', 'http://localhost');
    let name: string;
    if (url.pathname === '/') {
      // GraphQL over GET (?query=) and API clients stay with Apollo.
      if (url.searchParams.has('query') || !/\btext\/html\b/.test(req.headers.accept ?? '')) return false;
      name = 'index.html';
    } else if (url.pathname === '/graphiql' || url.pathname === '/graphiql/') {
      name = 'graphiql.html';
    } else if (url.pathname.startsWith('/console/')) {
      name = url.pathname.slice('/console/'.length);
    } else return false;

    const bundle = load();
    res.setHeader('content-security-policy', CONSOLE_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    if (!bundle) {
      res.statusCode = 503;
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end('The console is not built: run `npm run build:console` (npm ci and npm run build do it).\n');
      return true;
    }
    const body = bundle.get(name);
    if (!body) {
      res.statusCode = 404;
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.end('not found\n');
      return true;
    }
    res.statusCode = 200;
    res.setHeader('content-type', TYPES[extname(name)]);
    // Pages revalidate (they name the bundle); assets are small and change with each build.
    res.setHeader('cache-control', 'no-cache');
    res.setHeader('content-length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
