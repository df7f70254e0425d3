/**
 * /status and /metrics carry the batcher's optional heartbeat fields (creating, pacing, progress,
 * completions_unwritten), and say "unknown" when a heartbeat lacks them. The heartbeat is handed over by an injected
 * reader, so each request sees exactly the heartbeat the test set.
 */
import request from 'supertest';
import { setLogSilent, type Heartbeat, type HeartbeatReadResult } from '@cfs-batcher/shared';
import { configFromEnv, createSidecar, type Now } from '@cfs-batcher/sidecar-health';
import { T0, heartbeat } from './helpers';

describe('the optional heartbeat fields in /status and /metrics', () => {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));

  it('shows creating and pacing, and says "unknown" for a heartbeat without them', async () => {
    let now: Now = { wallMs: T0, monoMs: 1000 };
    let hb: Heartbeat = heartbeat();
    const read = async (): Promise<HeartbeatReadResult> => ({
      ok: true,
      heartbeat: hb,
      mtimeMs: hb.written_at_ms,
      bytes: 500,
    });
    const sidecar = createSidecar(
      configFromEnv({ HEARTBEAT_PATH: '/nonexistent/hb.json', SIDECAR_CFS_POLL_SECONDS: '0' }),
      {
        clock: () => now,
        cfsClient: null,
        readHeartbeat: read,
        defaultMetrics: false,
      },
    );
    try {
      await sidecar.refresh();
      let st = await request(sidecar.app).get('/status');
      expect(st.body.heartbeat).toMatchObject({
        creating: null,
        pacing: null,
        last_cfs_answer_at: null,
        completions_unwritten: null,
      });
      let m = (await request(sidecar.app).get('/metrics')).text;
      expect(m).toMatch(/cfs_batcher_health_pending_sessions Nan/);
      expect(m).toMatch(/cfs_batcher_health_creating_state\{state="cfs_refusing"\} 0/);

      now = { wallMs: T0 + 2000, monoMs: 3000 };
      const creating = {
        state: 'cfs_refusing',
        reason: 'POST /v3/sessions answered 500 (3 times)',
        next_attempt_ms: T0 + 12_000,
        last_attempt_ms: T0 + 1500,
        cfs_trouble_since_ms: T0 - 60_000,
      };
      hb = {
        ...heartbeat({ sequence: 2, written_at_ms: T0 + 2000 }),
        creating,
        pacing: { pending_sessions: 3, pending_cap: 20, creates_per_minute_cap: 30 },
        progress: { last_cfs_answer_ms: T0 + 1900 },
        completions_unwritten: 4,
      } as Heartbeat;
      await sidecar.refresh();
      st = await request(sidecar.app).get('/status');
      expect(st.body.heartbeat.creating).toEqual({
        state: 'cfs_refusing',
        reason: 'POST /v3/sessions answered 500 (3 times)',
        next_attempt_at: new Date(T0 + 12_000).toISOString(),
        last_attempt_at: new Date(T0 + 1500).toISOString(),
        cfs_trouble_since: new Date(T0 - 60_000).toISOString(),
        last_attempt_seen_seconds_ago: 0,
      });
      expect(st.body.heartbeat).toMatchObject({
        pacing: { pending_sessions: 3, pending_cap: 20, creates_per_minute_cap: 30 },
        completions_unwritten: 4,
        last_cfs_answer_at: new Date(T0 + 1900).toISOString(),
      });
      expect(st.body.thresholds).toMatchObject({
        freshness_seconds: 14,
        trying_margin_seconds: 5,
        phase_answer_allowance_seconds: 60,
      });
      m = (await request(sidecar.app).get('/metrics')).text;
      expect(m).toMatch(/cfs_batcher_health_creating_state\{state="cfs_refusing"\} 1/);
      expect(m).toMatch(/cfs_batcher_health_creating_state\{state="ok"\} 0/);
      expect(m).toMatch(/cfs_batcher_health_pending_sessions 3/);
      expect(m).toMatch(/cfs_batcher_health_pending_sessions_cap 20/);
      expect(m).toMatch(/cfs_batcher_health_creates_per_minute_cap 30/);
      expect(m).toMatch(/cfs_batcher_health_completions_unwritten 4/);
    } finally {
      await sidecar.stop();
    }
  });
});
