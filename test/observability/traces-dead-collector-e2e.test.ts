/**
 * A dead trace collector changes nothing: the built batcher, exporting to a port nobody listens on, still creates
 * sessions, logs no error and exits cleanly on SIGTERM.
 * Needs `npm run build` first (npm test does it).
 */
import { freePort } from '../helpers/ports';
import { spawnNode } from '../helpers/proc';
import { makeTempDir } from '../helpers/tmp';
import { waitFor } from '../helpers/wait';
import { batcherEnv, startCfs, tracedProgramsLifecycle } from './traced-programs';

tracedProgramsLifecycle();

describe('an unreachable collector', () => {
  const tmp = makeTempDir('traces-dead');
  afterAll(() => tmp.cleanup());

  test('does not stop the batcher creating sessions, and SIGTERM still exits cleanly', async () => {
    const cfs = await startCfs();
    try {
      const dead = await freePort(); // nothing listens there
      const batcher = spawnNode({
        name: 'batcher-dead-otlp',
        script: 'batcher/dist/main.js',
        env: batcherEnv(cfs.url, `http://127.0.0.1:${dead}`, tmp.dir, await freePort()),
      });
      await waitFor(() => cfs.sim.history.all().length > 0 || !batcher.alive, {
        timeoutMs: 40_000,
        what: 'a session with no collector',
      });
      expect([batcher.alive, batcher.alive ? '' : batcher.tail()]).toEqual([true, '']);
      const exit = await batcher.stop(10_000);
      expect(exit.code).toBe(0);
      const errors = batcher.lines.filter((l) => l.json?.level === 'ERROR');
      expect(errors.map((l) => l.text)).toEqual([]);
    } finally {
      await cfs.close();
    }
  }, 60_000);
});
