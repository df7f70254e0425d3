/**
 * Start-up failures of the built programs as processes: each is one JSON ERROR line and nothing else, and a busy port
 * names the setting that chose it.
 */
import {
  BATCHER,
  SIDECAR,
  SIM,
  badStartLifecycle,
  batcherEnv,
  exitOf,
  occupy,
  run,
  sidecarEnv,
} from './bad-start-programs';

badStartLifecycle();

describe('start-up failures are one JSON ERROR line', () => {
  test('batcher: a bad value is a JSON line on stdout, nothing else', async () => {
    const p = run(BATCHER, batcherEnv({ METRICS_PORT: 'nine' }));
    const r = await exitOf(p);
    expect(r.code).toBe(2);
    expect(r.errors).toEqual(['Configuration error: METRICS_PORT="nine" is not an integer']);
    expect(r.plain).toEqual([]);
    expect(p.lines.filter((l) => l.stream === 'stderr')).toEqual([]);
  });

  test('batcher: a busy metrics port names METRICS_PORT', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(BATCHER, batcherEnv({ METRICS_PORT: String(busy.port) })));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set METRICS_PORT to a free port`,
      ]);
      expect(r.plain).toEqual([]);
    } finally {
      await busy.close();
    }
  });

  test('sidecar: a busy port names HEALTH_PORT', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(SIDECAR, sidecarEnv({ HEALTH_HOST: '0.0.0.0', HEALTH_PORT: String(busy.port) })));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set HEALTH_PORT to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });

  test('simulator: a busy port names --port', async () => {
    const busy = await occupy();
    try {
      const r = await exitOf(run(SIM, {}, ['--port', String(busy.port), '--host', '0.0.0.0', '--generate', '1']));
      expect(r.code).toBe(1);
      expect(r.errors).toEqual([
        `Cannot listen on 0.0.0.0:${busy.port}: EADDRINUSE, port ${busy.port} is already in use; set --port to a free port`,
      ]);
    } finally {
      await busy.close();
    }
  });
});
