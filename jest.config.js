/** Jest runs the TypeScript sources directly; workspace packages map to their src. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }] },
  moduleNameMapper: {
    '^@cfs-batcher/(shared|cfs-sim|batcher|sidecar-health)$': '<rootDir>/$1/src/index.ts',
  },
  testTimeout: 60000,
};
