/**
 * The sidecar's /livez through its HTTP app: the cached verdict, a stale heartbeat, no progress on pending work, a CFS
 * outage and a corrupt heartbeat, with what /status and /metrics report meanwhile; the probes never call CFS.
 */
import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { T0 } from './helpers';
import { advance, cfs, cfsState, hbPath, now, sidecar, sidecarAppLifecycle, warmUp, write } from './app-fixture';

describe('sidecar HTTP endpoints', () => {
  sidecarAppLifecycle();

  it('answers 503 before the first evaluation, then serves the cached verdict', async () => {
    expect((await request(sidecar.app).get('/livez')).status).toBe(503);
    await write();
    await sidecar.refresh();
    const r = await request(sidecar.app).get('/livez');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ live: true, reason: 'ok' });
    expect(r.body.message).toMatch(/^batcher alive: heartbeat 0.0 s ago \(limit 14 s\)/);
  });

  it('turns /livez 503 with an admin sentence when the heartbeat goes stale', async () => {
    await warmUp();
    await write({ phase: 'check_status', phase_started_at_ms: now.wallMs - 2000 });
    await sidecar.refresh();
    advance(13_000);
    await sidecar.refresh();
    expect((await request(sidecar.app).get('/livez')).status).toBe(200); // within the fixed 14 s freshness limit
    advance(2_000);
    await sidecar.refresh();
    const r = await request(sidecar.app).get('/livez');
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({
      live: false,
      reason: 'heartbeat_stale',
      message: 'no heartbeat for 15 s (limit 14 s); last phase check_status began 15 s ago',
    });
  });

  it('probes never call CFS: the evaluator polls, the probes read the cache', async () => {
    cfsState.pending = true;
    await write();
    await sidecar.pollCfs();
    await sidecar.refresh();
    advance(1000);
    await write();
    await sidecar.refresh();
    const before = { ...cfs.calls };
    expect(before.components).toBe(1);
    for (let i = 0; i < 20; i++) {
      const path = ['/livez', '/startupz', '/status', '/readyz', '/metrics'][i % 5]!;
      expect((await request(sidecar.app).get(path)).status).toBeLessThan(500);
    }
    expect(cfs.calls).toEqual(before);
  });

  it('fails /livez on pending work with no progress, and reports it in /status and /metrics', async () => {
    cfsState.pending = true;
    for (let i = 0; i < 30; i++) {
      advance(5000);
      await write();
      await sidecar.pollCfs();
      await sidecar.refresh();
    }
    const live = await request(sidecar.app).get('/livez');
    expect(live.status).toBe(503);
    expect(live.body.reason).toBe('no_progress');
    const st = await request(sidecar.app).get('/status');
    expect(st.body).toMatchObject({
      live: false,
      reason: 'no_progress',
      cfs: { reachable: true, pending_components: true, active_batcher_session: null },
    });
    expect(st.body.progress.deadline_seconds).toBe(120);
    const m = await request(sidecar.app).get('/metrics');
    expect(m.text).toMatch(/cfs_batcher_health_verdict\{reason="no_progress"\} 1/);
    expect(m.text).toMatch(/cfs_batcher_health_pending_stall_seconds 14\d/);
    expect(m.text).toMatch(/cfs_batcher_health_live 0/);
    // a batcher session shows up: progress, the stall clock resets
    cfsState.active = true;
    advance(1000);
    await write();
    await sidecar.pollCfs();
    await sidecar.refresh();
    expect((await request(sidecar.app).get('/livez')).status).toBe(200);
    expect((await request(sidecar.app).get('/status')).body.cfs.active_batcher_session).toEqual({
      name: 'batcher-1',
      status: 'running',
    });
    // why the clock last restarted, in /status and as a counter by reason
    const after = await request(sidecar.app).get('/status');
    expect(after.body.progress).toMatchObject({
      clock: 'stopped',
      stopped_reason: 'session_active',
      last_reset_reason: 'session_active',
      last_reset_seconds_ago: 0,
      resets: { session_active: 1, session_created: 0 },
    });
    const m2 = await request(sidecar.app).get('/metrics');
    expect(m2.text).toMatch(/cfs_batcher_health_progress_clock_resets_total\{reason="session_active"\} 1/);
    expect(m2.text).toMatch(/cfs_batcher_health_progress_clock_resets_total\{reason="session_created"\} 0/);
  });

  it('stays 200 through a CFS outage and reports it', async () => {
    cfsState.down = true;
    for (let i = 0; i < 30; i++) {
      advance(5000);
      await write({ phase: 'waiting_for_cfs', phase_is_wait: true, phase_started_at_ms: T0 });
      await sidecar.pollCfs();
      await sidecar.refresh();
      expect((await request(sidecar.app).get('/livez')).status).toBe(200);
    }
    const st = await request(sidecar.app).get('/status');
    expect(st.body.cfs).toMatchObject({ reachable: false, last_success_at: null });
    expect(st.body.cfs.last_error).toMatch(/ECONNREFUSED/);
    expect((await request(sidecar.app).get('/metrics')).text).toMatch(/cfs_batcher_health_cfs_reachable 0/);
  });

  it('reports a corrupt heartbeat with its reason and keeps the verdict until the freshness limit', async () => {
    await warmUp();
    await write();
    await sidecar.refresh();
    advance(2000);
    writeFileSync(hbPath, '{"format":1,"instance_');
    await sidecar.refresh();
    const live = await request(sidecar.app).get('/livez');
    expect(live.status).toBe(200);
    const st = await request(sidecar.app).get('/status');
    expect(st.body.heartbeat).toMatchObject({ read: 'not_json' });
    expect(st.body.heartbeat.read_problem).toMatch(/not JSON/);
    writeFileSync(hbPath, 'x'.repeat(70 * 1024));
    advance(40_000);
    await sidecar.refresh();
    const r = await request(sidecar.app).get('/livez');
    expect(r.status).toBe(503);
    expect(r.body.reason).toBe('heartbeat_invalid');
    expect(r.body.message).toMatch(/oversized: heartbeat is 71680 bytes \(limit 65536\)/);
  });
});
