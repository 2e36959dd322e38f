#!/usr/bin/env node
'use strict';
/*
 * `dhr` without a global install (`npx dhr …`, `npm start`): runs the compiled CLI in dist/, which
 * `npm ci` built (bin/setup.js). In a checkout that develops, what changed since (the TypeScript,
 * the console, the Prisma schema) is built first; with nothing changed the check costs a few
 * milliseconds (bin/build-state.js). Plain JavaScript: it must run before anything is built.
 */
const { join } = require('node:path');
const { builtEntry } = require('./build-state');
const { setup } = require('./setup');

const root = join(__dirname, '..');
if (!setup(root)) process.exit(1);
require(builtEntry(root)).runCli(process.argv.slice(2));
