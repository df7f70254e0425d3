/**
 * `--help` on every program, as a process: the usage goes to stdout (not stderr), the exit code is 0, nothing
 * starts, and the text lists every option of the program's declaration and every exit code it has.
 */
import { spawnSync } from 'node:child_process';
import { BATCHER_CLI } from '@cfs-batcher/batcher';
import { EXPLAIN_CLI } from '../../batcher/src/explain';
import { SIDECAR_CLI } from '@cfs-batcher/sidecar-health';
import type { CliSpec } from '@cfs-batcher/shared';
import { SIM_CLI } from '../../cfs-sim/src/main';
import { BENCH_CLI } from '../../scripts/src/bench-args';
import { LOCAL_POD_CLI } from '../../scripts/src/local-pod-args';
import { requireBuilt } from '../helpers/built';

const PROGRAMS: Array<[string, CliSpec]> = [
  ['batcher/dist/main.js', BATCHER_CLI],
  ['batcher/dist/explain.js', EXPLAIN_CLI],
  ['sidecar-health/dist/main.js', SIDECAR_CLI],
  ['cfs-sim/dist/main.js', SIM_CLI],
  ['scripts/dist/local-pod.js', LOCAL_POD_CLI],
  ['scripts/dist/bench.js', BENCH_CLI],
];

describe.each(PROGRAMS)('%s --help', (script, spec) => {
  let r: ReturnType<typeof spawnSync>;
  beforeAll(() => {
    const [entry] = requireBuilt(script);
    // an empty environment but PATH: the help must not depend on any setting
    r = spawnSync(process.execPath, [entry!, '--help'], {
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
      timeout: 30_000,
    });
  });

  it('exits 0 with the usage on stdout and nothing on stderr', () => {
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(String(r.stdout)).toMatch(/^usage: /);
  });

  it('lists every option and every exit code', () => {
    const out = String(r.stdout);
    for (const name of [...Object.keys(spec.options), 'help']) expect(out).toContain(`--${name}`);
    const codes = out.split(/^Exit codes:$/m)[1] ?? '';
    for (const [code, meaning] of spec.exitCodes) expect(codes).toContain(`${code}  ${meaning}`);
    expect(spec.exitCodes.map(([c]) => c)).toEqual(expect.arrayContaining([0, 2]));
  });
});
