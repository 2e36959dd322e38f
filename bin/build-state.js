'use strict';
/*
 * Whether each built output is current: the checks shared by bin/setup.js (npm ci's prepare step,
 * npm run build), bin/dhr.js (build before running when something is stale) and the tests' CLI
 * helper (run dist/ when it is current, else the sources through tsx). Cheap by design, since
 * bin/dhr.js runs them at every start: a walk of a few hundred file times and one small hash, a
 * few milliseconds. Plain JavaScript: it must run before anything is built.
 */
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { join } = require('node:path');

/** Newest modification time of the files under dir whose names match (.ts by default; 0 when there are none). */
function newestSource(dir, pattern = /\.ts$/) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path, pattern));
    else if (pattern.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The CLI's compiled entry point under root. */
function builtEntry(root) {
  return join(root, 'dist', 'src', 'cli', 'main.js');
}

/** Written after each successful compile: tsc leaves its unchanged outputs untouched. */
function buildStamp(root) {
  return join(root, 'dist', '.build-stamp');
}

/** True when the build is missing, or older than a source under src/ or a tsconfig. */
function buildIsStale(root) {
  const stamp = buildStamp(root);
  if (!existsSync(builtEntry(root)) || !existsSync(stamp)) return true;
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((file) => statSync(join(root, file)).mtimeMs);
  return Math.max(newestSource(join(root, 'src')), ...configs) > statSync(stamp).mtimeMs;
}

/** The console bundle's page, and whether it is missing or older than console/'s sources (false without them). */
function consolePage(root) {
  return join(root, 'dist', 'console', 'index.html');
}
function consoleIsStale(root) {
  const sources = join(root, 'console');
  if (!existsSync(join(sources, 'src'))) return false;
  const built = existsSync(consolePage(root)) ? statSync(consolePage(root)).mtimeMs : 0;
  const pages = ['index.html', 'graphiql.html'].filter((f) => existsSync(join(sources, f))).map((f) => statSync(join(sources, f)).mtimeMs);
  return Math.max(newestSource(join(sources, 'src'), /\.(tsx?|css)$/), ...pages) > built;
}

/** Where the generated Prisma client keeps what it was generated from. */
function clientStamp(root) {
  return join(root, 'src', 'generated', 'prisma', '.generated-from');
}

/**
 * What the Prisma client is generated from: the schema, prisma.config.ts and the prisma
 * version, hashed (file times would not do: npm gives every installed file the same old time).
 * Undefined where there is no schema (an installed, pre-built copy).
 */
function clientInputs(root) {
  const schema = join(root, 'prisma', 'schema.prisma');
  if (!existsSync(schema)) return undefined;
  const hash = createHash('sha256').update(readFileSync(schema));
  const config = join(root, 'prisma.config.ts');
  if (existsSync(config)) hash.update(readFileSync(config));
  const prisma = join(root, 'node_modules', 'prisma', 'package.json');
  if (existsSync(prisma)) hash.update(JSON.parse(readFileSync(prisma, 'utf8')).version);
  return hash.digest('hex');
}

/** True when the Prisma client is missing or was generated from other inputs (false without a schema). */
function clientIsStale(root) {
  const inputs = clientInputs(root);
  if (inputs === undefined) return false;
  try {
    return readFileSync(clientStamp(root), 'utf8').trim() !== inputs;
  } catch {
    return true;
  }
}

module.exports = { newestSource, builtEntry, buildStamp, buildIsStale, consolePage, consoleIsStale, clientStamp, clientInputs, clientIsStale };
