/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The browser suite needs Chromium: npm run test:browser (jest.browser.config.js); the replica
  // suite a primary and a standby: npm run test:replica (jest.replica.config.js); the Citus suite
  // a Citus cluster: npm run test:citus (jest.citus.config.js).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/browser/', '<rootDir>/test/replica/', '<rootDir>/test/citus/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  setupFiles: ['reflect-metadata', '<rootDir>/test/setup/main-realm.ts'],
  // Prisma's generated client imports its siblings as './x.js' (node16 resolution); jest needs the .ts.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testTimeout: 120000,
};
