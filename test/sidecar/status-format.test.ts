/**
 * /status is for people: every instant an RFC 3339 UTC string, every duration a whole number in the unit its name
 * ends in, no epoch milliseconds and no fractional milliseconds (docs/CONTRACTS.md, "Sidecar /status"). A heartbeat
 * with every field, fractional durations included, goes in; the whole document is walked.
 */
import request from 'supertest';
import { setLogSilent, type Heartbeat, type HeartbeatReadResult } from '@cfs-batcher/shared';
import { configFromEnv, createSidecar, type Now } from '@cfs-batcher/sidecar-health';
import { T0, heartbeat } from './helpers';

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Every leaf of `v` with its path. */
function leaves(v: unknown, at = ''): [string, unknown][] {
  if (v !== null && typeof v === 'object')
    return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => leaves(x, at ? `${at}.${k}` : k));
  return [[at, v]];
}

it('one time format and whole units, the retrying call included', async () => {
  setLogSilent(true);
  const hb = {
    ...heartbeat({ sequence: 2, written_at_ms: T0 + 2000, cycle: 3 }),
    last_cycle: { completed_at_ms: T0 + 1500, duration_ms: 1234.5678, outcome: 'error', error: '503 from CFS' },
    backoff: { active: true, seconds: 60, until_ms: T0 + 60_000 },
    cfs: {
      last_success_ms: T0 - 70_000,
      last_error: { at_ms: T0 - 1000, kind: 'http', message: 'GET /v3/options: CFS answered 503' },
      retrying: {
        method: 'GET',
        route: '/v3/options',
        answer: '503',
        attempts: 4,
        since_ms: T0 - 1000,
        until_ms: T0 + 29_000,
      },
    },
    counters: { ...heartbeat().counters, last_session_created_ms: T0 - 5000 },
    progress: { last_cfs_answer_ms: T0 + 1900 },
  } as Heartbeat;
  const read = async (): Promise<HeartbeatReadResult> => ({ ok: true, heartbeat: hb, mtimeMs: T0, bytes: 500 });
  const now: Now = { wallMs: T0 + 2345.678, monoMs: 1234.567 };
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
    const body = (await request(sidecar.app).get('/status')).body as Record<string, unknown>;
    const all = leaves(body);
    for (const [at, v] of all) {
      if (typeof v === 'number') {
        expect([at, v < 1e12]).toEqual([at, true]); // no epoch milliseconds
        if (/(_ms|_seconds|seconds)$/.test(at)) expect([at, Number.isInteger(v)]).toEqual([at, true]);
      }
      if (typeof v === 'string' && /^\d{4}-\d\d-\d\d/.test(v)) expect([at, RFC3339.test(v)]).toEqual([at, true]);
      expect([at, /_ms$/.test(at) && !/duration_ms$/.test(at)]).toEqual([at, false]); // instants are `_at`
    }
    const h = body.heartbeat as Record<string, unknown>;
    expect(h.last_cycle).toEqual({
      completed_at: new Date(T0 + 1500).toISOString(),
      duration_ms: 1235,
      outcome: 'error',
      error: '503 from CFS',
    });
    expect(h.batcher_cfs).toEqual({
      last_success_at: new Date(T0 - 70_000).toISOString(),
      last_error: { at: new Date(T0 - 1000).toISOString(), kind: 'http', message: 'GET /v3/options: CFS answered 503' },
      retrying: {
        method: 'GET',
        route: '/v3/options',
        answer: '503',
        attempts: 4,
        since: new Date(T0 - 1000).toISOString(),
        until: new Date(T0 + 29_000).toISOString(),
      },
    });
    expect(h.backoff).toEqual({ active: true, seconds: 60, until: new Date(T0 + 60_000).toISOString() });
  } finally {
    await sidecar.stop();
    setLogSilent(false);
  }
});
