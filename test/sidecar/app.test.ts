import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { setLogSilent, writeHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import {
  configFromEnv,
  createSidecar,
  standaloneCheck,
  type Now,
  type Sidecar,
  type SidecarCfsClient,
} from '@cfs-batcher/sidecar-health';
import { T0, heartbeat } from './helpers';
import { requireBuilt } from '../helpers/built';

/** A fake CFS client: scripted answers, and a count of calls so tests can prove probes never reach CFS. */
function fakeCfs(state: { pending: boolean; active: boolean; down: boolean }) {
  const calls = { components: 0, sessions: 0 };
  const client: SidecarCfsClient = {
    listComponents: async function* () {
      calls.components++;
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
      yield { components: state.pending ? [{ id: 'x1' }] : [], invalid: [] };
    } as SidecarCfsClient['listComponents'],
    listSessions: async function* () {
      calls.sessions++;
      yield { sessions: state.active ? [{ name: 'batcher-1' }] : [], invalid: [] };
    } as SidecarCfsClient['listSessions'],
  };
  return { client, calls };
}

describe('sidecar HTTP endpoints', () => {
  let dir: string;
  let hbPath: string;
  let now: Now;
  let sidecar: Sidecar;
  let cfsState: { pending: boolean; active: boolean; down: boolean };
  let cfs: ReturnType<typeof fakeCfs>;
  let seq = 1;

  const advance = (ms: number): void => {
    now = { wallMs: now.wallMs + ms, monoMs: now.monoMs + ms };
  };
  const write = async (over: Partial<Heartbeat> = {}): Promise<void> => {
    await writeHeartbeat(
      hbPath,
      heartbeat({
        sequence: seq++,
        written_at_ms: now.wallMs,
        phase_started_at_ms: now.wallMs,
        started_at_ms: T0,
        ...over,
      }),
    );
  };

  /** Runs a healthy batcher past the sidecar's startup grace. */
  const warmUp = async (): Promise<void> => {
    for (let i = 0; i < 13; i++) {
      advance(5000);
      await write();
      await sidecar.refresh();
    }
    expect(sidecar.evaluation()?.verdict.details.inStartupGrace).toBe(false);
  };

  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-app-'));
    hbPath = path.join(dir, 'heartbeat.json');
    now = { wallMs: T0, monoMs: 5000 };
    seq = 1;
    cfsState = { pending: false, active: false, down: false };
    cfs = fakeCfs(cfsState);
    const config = configFromEnv({ HEARTBEAT_PATH: hbPath, HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1' });
    sidecar = createSidecar(config, { clock: () => now, cfsClient: cfs.client, defaultMetrics: false });
  });
  afterEach(async () => {
    await sidecar.stop();
    rmSync(dir, { recursive: true, force: true });
  });

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
      cycle_budget_seconds: 30,
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
      configFromEnv({
        HEARTBEAT_PATH: hbPath,
        HEALTH_PORT: '0',
        HEALTH_HOST: '127.0.0.1',
        SIDECAR_EVAL_INTERVAL_MS: '50',
        SIDECAR_CFS_POLL_SECONDS: '0',
      }),
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
      const deadline = Date.now() + 5000;
      let body: { reason?: string } = {};
      while (Date.now() < deadline && body.reason !== 'ok') {
        body = (await request(`http://127.0.0.1:${port}`).get('/livez')).body as { reason?: string };
        if (body.reason !== 'ok') await new Promise((r) => setTimeout(r, 50));
      }
      expect(body.reason).toBe('ok');
      // a second beat: the loop is seen advancing, the startup gate opens
      const second = Date.now();
      await writeHeartbeat(
        hbPath,
        heartbeat({ sequence: 8, written_at_ms: second, started_at_ms: second, phase_started_at_ms: second }),
      );
      let startup = 503;
      while (Date.now() < deadline + 5000 && startup !== 200) {
        startup = (await request(`http://127.0.0.1:${port}`).get('/startupz')).status;
        if (startup !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(startup).toBe(200);
    } finally {
      await real.stop();
    }
  });
});

describe('check mode (standalone)', () => {
  const main = path.resolve(__dirname, '..', '..', 'sidecar-health', 'dist', 'main.js');
  it('the CLI exits 0 for a fresh heartbeat and 1 for a stale one', async () => {
    requireBuilt(main);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-cli-'));
    try {
      const hbPath = path.join(dir, 'hb.json');
      const run = () =>
        spawnSync(process.execPath, [main, 'check', '--standalone'], {
          env: { PATH: process.env.PATH, HEARTBEAT_PATH: hbPath },
          encoding: 'utf8',
          timeout: 10_000,
        });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: Date.now(), started_at_ms: Date.now() }));
      const good = run();
      expect(good.status).toBe(0);
      expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, source: 'standalone', reason: 'ok' });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: Date.now() - 120_000 }));
      const stale = run();
      expect(stale.status).toBe(1);
      expect(JSON.parse(stale.stdout)).toMatchObject({ ok: false, reason: 'heartbeat_stale' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('judges one read by written_at alone and exits 0/1 accordingly', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-check-'));
    try {
      const hbPath = path.join(dir, 'hb.json');
      const config = configFromEnv({ HEARTBEAT_PATH: hbPath });
      const now = { wallMs: T0 + 10_000, monoMs: 1e6 };
      expect(await standaloneCheck(config, 'live', now)).toMatchObject({
        ok: false,
        body: { reason: 'heartbeat_missing' },
      });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: T0 + 5000 }));
      expect(await standaloneCheck(config, 'live', now)).toMatchObject({ ok: true, body: { reason: 'ok' } });
      expect(await standaloneCheck(config, 'live', { wallMs: T0 + 50_000, monoMs: 1e6 })).toMatchObject({
        ok: false,
        body: { reason: 'heartbeat_stale' },
      });
      // one read: the file's own age stands for "seen advancing", and the gate wants a few seconds at most
      expect(await standaloneCheck(config, 'startup', now)).toMatchObject({ ok: false });
      await writeHeartbeat(hbPath, heartbeat({ written_at_ms: T0 + 9000 }));
      expect(await standaloneCheck(config, 'startup', now)).toMatchObject({ ok: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
