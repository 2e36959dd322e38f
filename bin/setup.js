#!/usr/bin/env node
'use strict';
/*
 * Leaves the checkout ready to run: the Prisma client generated from prisma/schema.prisma, the
 * TypeScript compiled into dist/, the console bundled into dist/console/. `npm ci` runs it (the
 * prepare script), so `npm start` and `npx dhr` start without compiling; `npm run build` runs it
 * with --force (compile and bundle whatever their state); bin/dhr.js runs the same steps before
 * a command when a source changed in a checkout that develops. Without --force each step runs
 * only when its output is missing or stale (bin/build-state.js): the first `npx dhr` of a
 * checkout installs the project into npm's npx cache, which runs the prepare script again, and
 * that must cost no compile. Offline; plain JavaScript, since it runs before anything is built.
 */
const { existsSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');
const { buildIsStale, buildStamp, clientInputs, clientIsStale, clientStamp, consoleIsStale } = require('./build-state');

/** Runs a node script; false when it fails. Quiet: its output is shown only then. */
function node(args, options = {}) {
  const run = spawnSync(process.execPath, args, { stdio: options.quiet ? 'pipe' : 'inherit', env: { ...process.env, ...options.env }, encoding: 'utf8' });
  if (run.status !== 0 && options.quiet) process.stderr.write(`${run.stdout}${run.stderr}`);
  return run.status === 0;
}

/**
 * The steps, in order (the client is compiled with the rest). `log` says what runs; returns
 * false when a step failed. A package without sources (an installed, pre-built copy) has nothing to do.
 */
function setup(root, { force = false, log = (m) => process.stderr.write(`${m}\n`) } = {}) {
  if (!existsSync(join(root, 'src'))) return true;
  if (clientIsStale(root)) {
    const prisma = join(root, 'node_modules', 'prisma', 'build', 'index.js');
    if (existsSync(prisma)) {
      log('dhr: generating the Prisma client (none yet, or its schema or prisma changed)…');
      // No schema engine: only `generate` runs here, and it needs none (no download, offline).
      // No jiti cache either (prisma reads prisma.config.ts through jiti): written into
      // node_modules/.cache, it would make npm's record of node_modules (.package-lock.json)
      // look out of date, and every `npx dhr` would then re-read all of node_modules (seconds).
      const env = { PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false', JITI_FS_CACHE: 'false' };
      if (!node([prisma, 'generate'], { quiet: true, env })) return false;
      writeFileSync(clientStamp(root), `${clientInputs(root)}\n`);
    } else if (!existsSync(join(root, 'src', 'generated', 'prisma', 'client.ts'))) {
      log('dhr: the Prisma client is missing and prisma is not installed: run `npm ci`');
      return false;
    }
  }
  if (force || buildIsStale(root)) {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    if (existsSync(tsc)) {
      const fresh = !existsSync(buildStamp(root));
      log(force || fresh ? 'dhr: compiling TypeScript into dist/…' : 'dhr: compiling TypeScript (the sources changed since the last build)…');
      if (!node([tsc, '-p', join(root, 'tsconfig.build.json')])) return false;
      writeFileSync(buildStamp(root), `${new Date().toISOString()}\n`);
    } else if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) {
      log('dhr: dist/ is missing and TypeScript is not installed: run `npm ci`');
      return false;
    }
  }
  if ((force || consoleIsStale(root)) && existsSync(join(root, 'node_modules', 'esbuild'))) {
    if (!force) log('dhr: bundling the console into dist/console…');
    if (!node([join(root, 'scripts', 'build-console.mjs')])) return false;
  }
  return true;
}

module.exports = { setup };

if (require.main === module) {
  process.exit(setup(join(__dirname, '..'), { force: process.argv.includes('--force') }) ? 0 : 1);
}
