/**
 * exitAfterLogs beyond the single fatal line: lines logged while it waits, a second call, a reader already gone.
 * One-shot runs of the built shared library, stdout a pipe.
 */
import { spawnSync } from 'node:child_process';
import { requireBuilt } from '../helpers/built';

const [SHARED] = requireBuilt('shared/dist/index.js');

function run(script: string) {
  const r = spawnSync(process.execPath, ['-e', `const shared = require(${JSON.stringify(SHARED)});\n${script}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 30_000,
  });
  const lines = (r.stdout ?? '')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: r.status, stderr: r.stderr, lines };
}

it('a line logged while the exit waits is dropped without an error; every line before it arrives', () => {
  const r = run(`
    const log = shared.getLogger('t');
    for (let i = 0; i < 500; i++) log.info('line ' + i);
    log.error('last words');
    shared.exitAfterLogs(4);
    log.info('too late');
    setImmediate(() => log.warn('later still'));`);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(4);
  expect(r.lines).toHaveLength(501);
  expect(r.lines.at(-1)).toMatchObject({ level: 'ERROR', message: 'last words' });
});

it('a crash while a clean stop waits for its lines still exits with the crash code', () => {
  const r = run(`
    const log = shared.getLogger('t');
    log.info('Stopped');
    shared.exitAfterLogs(0);
    shared.exitAfterLogs(1);`);
  expect(r.status).toBe(1);
  expect(r.lines).toEqual([expect.objectContaining({ message: 'Stopped' })]);
});
