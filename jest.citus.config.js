/**
 * The Citus suite (npm run test:citus): real Citus coordinator + workers (scripts/citus-cluster.sh,
 * CITUS_URL) and the single-node PostgreSQL to compare with (SINGLE_URL). Not part of `npm test`.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/citus'],
  testMatch: ['**/*.citus.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 300000,
};
