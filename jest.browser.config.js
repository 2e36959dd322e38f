/**
 * The browser suite (`npm run test:browser`): the console in headless Chromium. Apart from
 * `npm test` because it needs a browser that scripts/install-chromium.sh fetches (.ci/run does).
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = { ...base, roots: ['<rootDir>/test/browser'], testPathIgnorePatterns: ['/node_modules/'] };
