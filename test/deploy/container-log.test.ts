/**
 * A local pod's container log starts afresh with each run: a grep of `.local-pod/*.log` finds this run's lines, never
 * the previous pod's errors.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SupervisedContainer } from '../../scripts/src/container';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';

const tmp = makeTempDir('container-log');
afterAll(() => tmp.cleanup());

it("a container's log file is truncated when the run starts, not appended to", async () => {
  const logFile = path.join(tmp.dir, 'cfs-batcher.log');
  writeFileSync(logFile, '{"level":"ERROR","message":"from the previous run"}\n');
  const c = new SupervisedContainer({
    name: 'cfs-batcher',
    command: process.execPath,
    args: ['-e', ''],
    cwd: tmp.dir,
    env: {},
    probes: { podTerminationGracePeriodSeconds: 1 },
    mapPort: (p) => p,
    logFile,
    onMessage: () => undefined,
  });
  c.closeLog();
  await waitFor(() => !readFileSync(logFile, 'utf8').includes('previous run'), {
    timeoutMs: 5000,
    intervalMs: 20,
    what: 'the previous run gone from the log file',
  });
  expect(readFileSync(logFile, 'utf8')).toBe('');
});
