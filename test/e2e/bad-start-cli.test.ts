/**
 * The command line of the built programs as processes: `--help` prints the usage and exits 0 without starting, and
 * an unknown argument or command is refused (exit 2), while a valid check still judges.
 */
import { BATCHER, SIDECAR, SIM, badStartLifecycle, batcherEnv, exitOf, run, sidecarEnv } from './bad-start-programs';

badStartLifecycle();

describe('the command line', () => {
  test.each([
    [BATCHER, /^usage: node batcher\/dist\/main\.js$/m],
    [SIDECAR, /^usage: node sidecar-health\/dist\/main\.js \[serve \| check \[live\|startup\]\] \[options\]$/m],
    [SIM, /^usage: node cfs-sim\/dist\/main\.js \[options\]$/m],
  ])('%s --help prints the usage and exits 0 without starting', async (script, usage) => {
    const env = script === BATCHER ? batcherEnv() : script === SIDECAR ? sidecarEnv() : {};
    const p = run(script, env, ['--help']);
    const r = await exitOf(p);
    expect(r.code).toBe(0);
    expect(r.plain.join('\n')).toMatch(usage);
    expect(p.lines.filter((l) => l.json !== undefined)).toEqual([]);
  });

  test('batcher: an unknown argument is refused (exit 2), not ignored', async () => {
    const r = await exitOf(run(BATCHER, batcherEnv(), ['--once']));
    expect(r.code).toBe(2);
    expect(r.errors).toEqual([expect.stringMatching(/^Configuration error: Unknown option '--once' \(usage: /)]);
  });

  test.each([[['check', 'bogus']], [['check', 'live', 'extra']], [['chek']], [['serve', '--standalone']]])(
    'sidecar %j is refused with the usage (exit 2)',
    async (args) => {
      const r = await exitOf(run(SIDECAR, sidecarEnv(), args));
      expect(r.code).toBe(2);
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(/^Configuration error: .*\(usage: main\.js \[serve\] \| main\.js check /);
    },
  );

  test('sidecar check live still judges (exit 1: no heartbeat), not refused', async () => {
    const r = await exitOf(run(SIDECAR, sidecarEnv(), ['check', 'live', '--standalone']));
    expect(r.code).toBe(1);
    expect(r.errors).toEqual([]);
  });
});
