'use strict';
/*
 * Whether dist/ is current: the one check shared by bin/dhr.js (compile before running when it is
 * not) and the tests' CLI helper (run dist/ when it is, else the sources through tsx). Plain
 * JavaScript: bin/dhr.js needs it before anything is built.
 */
const { existsSync, readdirSync, statSync } = require('node:fs');
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

/** True when the build is missing, or older than a source under src/ or a tsconfig (dist/.build-stamp: tsc leaves unchanged outputs untouched). */
function buildIsStale(root) {
  const stamp = join(root, 'dist', '.build-stamp');
  if (!existsSync(builtEntry(root)) || !existsSync(stamp)) return true;
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((file) => statSync(join(root, file)).mtimeMs);
  return Math.max(newestSource(join(root, 'src')), ...configs) > statSync(stamp).mtimeMs;
}

module.exports = { newestSource, builtEntry, buildIsStale };
