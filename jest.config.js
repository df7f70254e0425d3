/** Jest runs the TypeScript sources directly; workspace packages map to their src. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }] },
  moduleNameMapper: {
    '^@cfs-batcher/(shared|cfs-sim|batcher|sidecar-health)$': '<rootDir>/$1/src/index.ts',
    // subpath entries (package.json "exports"): @cfs-batcher/shared/tracing -> shared/src/tracing.ts
    '^@cfs-batcher/(shared|cfs-sim|batcher|sidecar-health)/([a-z-]+)$': '<rootDir>/$1/src/$2.ts',
  },
  testTimeout: 60000,
};
