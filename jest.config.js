/**
 * Jest runs the TypeScript sources directly; workspace packages map to their src. Three tiers (jest `projects`):
 * - unit: pure code, no socket, file or process (fake clocks where time matters); the one file read is a scan of
 *   the repository's own sources (test/repo);
 * - integration: in-process simulator and real client, the sidecar app, contract tests, manifests, promtool,
 *   amtool, kubectl, and one-shot CLI runs (a program started, answered and gone within a second);
 * - e2e: the programs as running processes (a pod, a simulator, a batcher or a sidecar that has to be stopped).
 * `npm run test:fast` = unit + integration; `npm test` = all three. Every test file sits in exactly one tier: unit
 * and e2e are listed, every other file is integration (so a new file cannot slip out of `npm test`), and a listed
 * file that does not exist or is listed twice stops jest here. A new file that spawns a program goes in E2E.
 * Tests that need a tool a bare machine lacks declare it with test/helpers/requires.ts; the skip-summary reporter
 * lists at the end what did not run and how to enable it.
 */
const { readdirSync } = require('node:fs');
const { availableParallelism } = require('node:os');
const path = require('node:path');

const UNIT = [
  'batcher/allowance-rules',
  'batcher/batch-book',
  'batcher/config',
  'batcher/explain-rules',
  'batcher/intern',
  'batcher/pacing-rules',
  'batcher/rules-batching',
  'batcher/rules-cfs-errors',
  'batcher/rules-completion',
  'batcher/rules-foreign',
  'batcher/rules-component',
  'batcher/rules-options',
  'batcher/rules-rebuild',
  'client/derived-check',
  'deploy/pod-limits',
  'deploy/prober',
  'e2e/invariants',
  'helpers/requires',
  'repo/source-comments',
  'shared/settings',
  'shared/logger-line',
  'shared/logger-meta',
  'shared/logger-sinks',
  'shared/logger-trace',
  'sidecar/heartbeat-ext',
  'sidecar/verdict-config',
  'sidecar/verdict-freshness',
  'sidecar/verdict-phase-budget',
  'sidecar/verdict-progress',
  'sidecar/verdict-robustness',
  'sidecar/verdict-stall-clock',
  'sidecar/verdict-startup',
  'sidecar/verdict-unreadable',
  'sim/status',
];

const E2E = [
  'e2e/ambiguous-creates',
  'e2e/pacing-operators',
  'e2e/bad-start-cfs-url',
  'e2e/bad-start-cli',
  'e2e/bad-start-failures',
  'e2e/bad-start-settings',
  'e2e/cfs-trouble-said',
  'e2e/help',
  'e2e/foreign-batcher',
  'e2e/node-version',
  'batcher/process',
  'deploy/images-dockerfile-helpers',
  'deploy/images-dockerfiles',
  'deploy/images-entrypoints',
  'deploy/local-pod',
  'deploy/npm-start',
  'e2e/crash',
  'e2e/hang',
  'e2e/heartbeat-volume',
  'e2e/outage',
  'e2e/seed-404',
  'e2e/sidecar-restart',
  'e2e/stall',
  'e2e/stall-csm',
  'observability/prometheus-e2e',
  'observability/traces-batcher-e2e',
  'observability/traces-dead-collector-e2e',
  'observability/traces-sidecar-e2e',
  'sidecar/e2e',
  'sidecar/start-failures',
  'sidecar/startupz',
  'sidecar/tracing',
];

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts')
      ? [path.relative(path.join(__dirname, 'test'), p).replace(/\.test\.ts$/, '')]
      : [];
  });
}

const ALL = testFiles(path.join(__dirname, 'test'));
for (const name of [...UNIT, ...E2E]) {
  if (!ALL.includes(name))
    throw new Error(`jest.config.js: test/${name}.test.ts is listed in a tier but does not exist`);
}
const doubled = UNIT.filter((n) => E2E.includes(n));
if (doubled.length > 0) throw new Error(`jest.config.js: in two tiers: ${doubled.join(', ')}`);
const INTEGRATION = ALL.filter((n) => !UNIT.includes(n) && !E2E.includes(n));

const common = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.json' }] },
  moduleNameMapper: {
    '^@cfs-batcher/(shared|cfs-sim|batcher|sidecar-health)$': '<rootDir>/$1/src/index.ts',
    // subpath entries (package.json "exports"): @cfs-batcher/shared/tracing -> shared/src/tracing.ts
    '^@cfs-batcher/(shared|cfs-sim|batcher|sidecar-health)/([a-z-]+)$': '<rootDir>/$1/src/$2.ts',
  },
};

const tier = (name, files) => ({
  ...common,
  displayName: name,
  testMatch: files.map((f) => `<rootDir>/test/${f}.test.ts`),
});

module.exports = {
  reporters: ['default', '<rootDir>/test/helpers/skip-summary.js'],
  // A global option: jest ignores testTimeout inside a project (5 s would then apply to every tier).
  testTimeout: 60_000,
  // jest's default (cores - 1) is one worker on a 2-core machine; the process-level files spend their time waiting
  // on their children, so two at a time nearly halve the suite without competing for the CPU.
  maxWorkers: Math.max(2, availableParallelism() - 1),
  projects: [tier('unit', UNIT), tier('integration', INTEGRATION), tier('e2e', E2E)],
};
