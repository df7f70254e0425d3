/**
 * The sidecar's other endpoints through its HTTP app: /startupz and the restart count in /status, /healthz and /readyz,
 * request counts in /metrics, and a real listening sidecar whose own loop refreshes the verdict.
 */
import { rmSync } from 'node:fs';
import { writeHeartbeat } from '@cfs-batcher/shared';
import { configFromEnv, createSidecar } from '@cfs-batcher/sidecar-health';
import request from 'supertest';
import { waitFor } from '../helpers/wait';
import { T0, heartbeat } from './helpers';
import { advance, dir, hbPath, now, seq, sidecar, sidecarAppLifecycle, write } from './app-fixture';

describe('sidecar HTTP endpoints', () => {
  sidecarAppLifecycle();

  it('/startupz waits for a live loop of the current instance; /status counts the restart', async () => {
    await write({ instance_id: 'old', started_at_ms: T0 - 3_600_000 });
    await sidecar.refresh();
    const stale = await request(sidecar.app).get('/startupz');
    expect(stale.status).toBe(503);
    expect(stale.body.message).toMatch(/^instance old \(started 3600 s ago\): .*has not advanced/);
    advance(3000);
    const started = now.wallMs - 1000;
    await write({ instance_id: 'new', started_at_ms: started });
    await sidecar.refresh();
    expect((await request(sidecar.app).get('/startupz')).status).toBe(503);
    advance(1000);
    await write({ instance_id: 'new', started_at_ms: started });
    await sidecar.refresh();
    const r = await request(sidecar.app).get('/startupz');
    expect(r.status).toBe(200);
    expect(r.body.message).toMatch(/^instance new \(started 2\.0 s ago\) is alive/);
    const st = await request(sidecar.app).get('/status');
    expect(st.body).toMatchObject({ restarts_seen: 1, instances_seen: ['old', 'new'] });
    expect(st.body.thresholds).toMatchObject({
      startup_grace_seconds: 60,
      freshness_limit_seconds: 14,
    });
    const m = await request(sidecar.app).get('/metrics');
    expect(m.text).toMatch(/cfs_batcher_health_batcher_restarts_total 1/);
    expect(m.text).toMatch(new RegExp(`cfs_batcher_health_heartbeat_sequence ${seq - 1}`));
  });

  it('/healthz follows the evaluator loop, /readyz the heartbeat volume', async () => {
    await sidecar.refresh();
    expect((await request(sidecar.app).get('/healthz')).status).toBe(200);
    expect((await request(sidecar.app).get('/readyz')).status).toBe(200);
    advance(60_000); // the loop did not run for a minute
    const h = await request(sidecar.app).get('/healthz');
    expect(h.status).toBe(503);
    expect(h.body.message).toMatch(/evaluator loop has not run for 60 s/);
    rmSync(dir, { recursive: true, force: true });
    await sidecar.refresh();
    const r = await request(sidecar.app).get('/readyz');
    expect(r.status).toBe(503);
    expect(r.body.message).toMatch(/not readable/);
  });

  it('counts every request by path and code', async () => {
    await write();
    await sidecar.refresh();
    await request(sidecar.app).get('/livez');
    await request(sidecar.app).get('/livez');
    await request(sidecar.app).get('/nope');
    const m = await request(sidecar.app).get('/metrics');
    expect(m.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.text).toMatch(/cfs_batcher_health_probe_requests_total\{path="\/livez",code="200"\} 2/);
    expect(m.text).toMatch(/cfs_batcher_health_probe_requests_total\{path="other",code="404"\} 1/);
    for (const name of [
      'cfs_batcher_health_heartbeat_age_seconds',
      'cfs_batcher_health_last_heartbeat_timestamp_seconds',
      'cfs_batcher_health_pending_components',
    ]) {
      expect(m.text).toContain(`# TYPE ${name} gauge`);
    }
  });

  it('start() listens and the loop refreshes on its own', async () => {
    const real = createSidecar(
      {
        ...configFromEnv({
          HEARTBEAT_PATH: hbPath,
          HEALTH_PORT: '0',
          HEALTH_HOST: '127.0.0.1',
          SIDECAR_CFS_POLL_SECONDS: '0',
        }),
        evalIntervalMs: 50,
      },
      { defaultMetrics: false },
    );
    try {
      const port = await real.start();
      await writeHeartbeat(
        hbPath,
        heartbeat({
          sequence: 7,
          written_at_ms: Date.now(),
          started_at_ms: Date.now(),
          phase_started_at_ms: Date.now(),
        }),
      );
      const body = await waitFor(
        async () => {
          const b = (await request(`http://127.0.0.1:${port}`).get('/livez')).body as { reason?: string };
          return b.reason === 'ok' ? b : undefined;
        },
        { what: "/livez reason 'ok'", timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(body.reason).toBe('ok');
      // a second beat: the loop is seen advancing, the startup gate opens
      const second = Date.now();
      await writeHeartbeat(
        hbPath,
        heartbeat({ sequence: 8, written_at_ms: second, started_at_ms: second, phase_started_at_ms: second }),
      );
      const startup = await waitFor(
        async () => {
          const status = (await request(`http://127.0.0.1:${port}`).get('/startupz')).status;
          return status === 200 ? status : undefined;
        },
        { what: '/startupz 200', timeoutMs: 10_000, intervalMs: 50 },
      );
      expect(startup).toBe(200);
    } finally {
      await real.stop();
    }
  });
});
