#!/usr/bin/env node
'use strict';
/*
 * `dhr` without a global install (`npx dhr …`, `npm start`): runs the compiled CLI in dist/,
 * compiling it first only when it is missing or older than the TypeScript sources, so a start
 * with nothing changed costs no compile. Plain JavaScript: it must run before anything is built.
 */
const { existsSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');
const { buildIsStale, builtEntry, newestSource } = require('./build-state');

const root = join(__dirname, '..');
const entry = builtEntry(root);
// Written after each successful build: tsc leaves its outputs untouched when nothing changed.
const stamp = join(root, 'dist', '.build-stamp');

// A package without sources (an installed, pre-built copy) runs what it has.
if (existsSync(join(root, 'src')) && buildIsStale(root)) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (existsSync(tsc)) {
    process.stderr.write('dhr: compiling TypeScript (the sources changed since the last build)…\n');
    const build = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
  } else if (!existsSync(entry)) {
    process.stderr.write('dhr: dist/ is missing and TypeScript is not installed: run `npm ci && npm run build`\n');
    process.exit(1);
  }
}

// The console bundle (dist/console), rebuilt the same way when console/ changed since it was built
// (npm ci and npm run build build it too; this covers a checkout updated without them).
const consoleSources = join(root, 'console');
const consolePage = join(root, 'dist', 'console', 'index.html');
const esbuild = join(root, 'node_modules', 'esbuild');
if (existsSync(consoleSources) && existsSync(esbuild)) {
  const built = existsSync(consolePage) ? statSync(consolePage).mtimeMs : 0;
  const newest = Math.max(newestSource(join(consoleSources, 'src'), /\.(tsx?|css)$/), ...['index.html', 'graphiql.html'].map((f) => statSync(join(consoleSources, f)).mtimeMs));
  if (newest > built) {
    process.stderr.write('dhr: building the console (console/ changed since the last build)…\n');
    const build = spawnSync(process.execPath, [join(root, 'scripts', 'build-console.mjs')], { stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
}

require(entry).runCli(process.argv.slice(2));
