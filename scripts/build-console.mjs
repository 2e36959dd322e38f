#!/usr/bin/env node
/*
 * Builds the console (console/) into dist/console/ with esbuild: the search console and
 * GraphiQL, React included, as plain files the server serves, so nothing loads from a CDN.
 * Runs from `npm ci` (prepare: bin/setup.js) and `npm run build`; the bundle is never committed.
 * Plain JavaScript: it runs before anything is compiled. Skips (exit 0) when the sources are
 * absent, as in the Docker image's dependency layer, which is built before the sources arrive.
 */
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'console');
const out = join(root, 'dist', 'console');

if (!existsSync(join(source, 'src', 'main.tsx'))) {
  console.error('build-console: no console sources here; skipped');
  process.exit(0);
}
const { build } = await import('esbuild');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { console: join(source, 'src', 'main.tsx'), graphiql: join(source, 'src', 'graphiql.tsx') },
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  jsx: 'automatic',
  outdir: out,
  define: { 'process.env.NODE_ENV': '"production"' },
  // Fonts and images that GraphiQL's CSS names become files next to it.
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
  assetNames: '[name]-[hash]',
  logLevel: 'warning',
});
for (const page of ['index.html', 'graphiql.html']) copyFileSync(join(source, page), join(out, page));
console.error(`build-console: wrote ${out}`);
