/**
 * The read-replica suite (`npm run test:replica`): needs a streaming primary and standby,
 * REPLICA_PRIMARY_URL and REPLICA_STANDBY_URL (scripts/replica-cluster.sh start prints both; .ci/run
 * starts and stops them). Apart from `npm test`, which has no replica to read from.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = { ...base, roots: ['<rootDir>/test/replica'], testPathIgnorePatterns: ['/node_modules/'] };
