/** The stall clock under CSM's defaults: only real progress restarts it; CFS trouble pauses it, never fails it. */
import { T0, Timeline, heartbeat } from './helpers';

describe('the stall clock restarts only on progress (CSM options: interval 10 s, window 60 s, deadline 120 s)', () => {
  type Over = Parameters<Timeline['write']>[0];
  type Cfs = Parameters<Timeline['cfsSays']>[0];
  /** What a current batcher says while it has batches and no CFS trouble (an older one leaves it out). */
  const creatingOk = {
    creating: {
      state: 'ok',
      reason: 'creating sessions as batches fill',
      next_attempt_ms: null,
      last_attempt_ms: null,
    },
  } as unknown as Over;
  /** A batcher that beats every second and completes a cycle every 10 s; the sidecar polls CFS every 10 s. */
  function run(
    seconds: number,
    beat: (s: number, wall: number) => Over = () => ({}),
    cfs: (s: number) => Cfs = () => ({}),
  ): { tl: Timeline; failedAt: number | null; reason: string | null } {
    const tl = new Timeline();
    let failedAt: number | null = null;
    let reason: string | null = null;
    for (let s = 0; s < seconds && failedAt === null; s++) {
      tl.advance(1000);
      if (s % 10 === 0) tl.cfsSays({ ok: true, pendingComponents: true, activeSession: null, ...cfs(s) });
      const v = tl.write({ sequence: s + 1, cycle: Math.floor(s / 10), ...creatingOk, ...beat(s, tl.now.wallMs) });
      if (!v.live) [failedAt, reason] = [s, v.reason];
    }
    return { tl, failedAt, reason };
  }
  const counters = (over: Partial<ReturnType<typeof heartbeat>['counters']> = {}) => ({
    pending_seen: 13,
    batches_queued: 3,
    batches_active: 0,
    sessions_created_total: 4,
    last_session_created_ms: T0 - 30_000,
    ...over,
  });
  /** The deadline is first reached 120 s after the clock started (the first poll, second 0). */
  const expectKilledInTime = (r: ReturnType<typeof run>, extraS = 0): void => {
    expect(r.reason).toBe('no_progress');
    expect(r.failedAt).toBeGreaterThan(120 + extraS - 1);
    expect(r.failedAt).toBeLessThanOrEqual(120 + extraS + 11); // + one poll + one evaluation
  };

  it('a created-at stamp that moves by 1 ms from write to write is not a created session (what reset it)', () => {
    const r = run(400, (s) => ({ counters: counters({ last_session_created_ms: T0 - 30_000 + (s % 2) }) }));
    expectKilledInTime(r);
    expect(r.tl.history.stall.lastReset).toBeNull();
  });

  it('an old CFS error whose stamp jitters is no new error (an older batcher, judged by its CFS errors)', () => {
    const r = run(400, (s) => ({
      creating: undefined,
      counters: counters(),
      cfs: { last_success_ms: T0, last_error: { at_ms: T0 - 60_000 - (s % 2), kind: 'http', message: '500' } },
    }));
    expectKilledInTime(r);
  });

  it('a jittering last_attempt_ms does not keep an old CFS-trouble excuse alive', () => {
    const creating = (s: number) => ({
      state: 'cfs_refusing',
      reason: 'POST /v3/sessions answered 500 (1 time)',
      next_attempt_ms: null,
      last_attempt_ms: T0 - 600_000 + (s % 2),
      cfs_trouble_since_ms: T0 - 600_000,
    });
    const r = run(400, (s) => ({ counters: counters(), ...({ creating: creating(s) } as Over) }));
    expect(r.reason).toBe('no_progress');
    expect(r.failedAt).toBeLessThanOrEqual(131);
    expect(r.tl.last.verdict.message).toMatch(/has stopped trying: last try seen \d+ s ago \(limit 25 s\)/);
  });

  it('a cycle whose collect saw nothing schedulable (pending_seen 0) neither stops nor restarts the clock', () => {
    const r = run(400, (s) => ({ counters: counters({ pending_seen: s >= 60 && s < 70 ? 0 : 13 }) }));
    expectKilledInTime(r);
  });

  it('a new CFS error (one failed poll of the batcher) is no progress: the clock pauses for the wait only', () => {
    const r = run(400, (s) => ({
      counters: counters(),
      ...(s === 50 ? { phase: 'waiting_for_cfs' as const, phase_is_wait: true } : {}),
      cfs: { last_success_ms: T0, last_error: s >= 50 ? { at_ms: T0 + 50_000, kind: 'http', message: '503' } : null },
    }));
    expectKilledInTime(r, 1);
    expect(r.tl.history.stall).toMatchObject({ lastReset: null, excusedMs: 1000 });
  });

  it('a moment where the sidecar cannot see CFS pauses the clock, it does not restart it', () => {
    const r = run(
      400,
      () => ({ counters: counters() }),
      (s) => (s === 60 ? { ok: false, error: 'timeout' } : {}),
    );
    expectKilledInTime(r, 10);
    expect(r.tl.history.stall).toMatchObject({ lastReset: null, excusedMs: 10_000 });
  });

  it('a batcher session seen active for one poll is progress: the clock restarts, labelled session_active', () => {
    const r = run(
      400,
      () => ({ counters: counters() }),
      (s) => (s === 60 ? { activeSession: { name: 'batcher-old', status: 'pending' } } : {}),
    );
    expectKilledInTime(r, 70);
    expect(r.tl.history.stall.lastReset?.reason).toBe('session_active');
    expect(r.tl.history.stall.resets).toMatchObject({ session_active: 1, session_created: 0 });
  });

  it('a created session (the counter) and a new instance restart it, each with its reason', () => {
    const r = run(400, (s) => ({
      counters: counters({ sessions_created_total: s >= 50 ? 5 : 4 }),
      ...(s >= 100 ? { instance_id: 'inst-b', started_at_ms: T0 + 100_000 } : {}),
    }));
    expect(r.tl.history.stall.resets).toMatchObject({ session_created: 1, new_instance: 1 });
    expect(r.tl.history.stall.lastReset?.reason).toBe('new_instance');
    expectKilledInTime(r, 100);
  });

  it('a long CFS outage, then a batcher that needs a full window to send, never fails liveness', () => {
    // outage from 30 s to 630 s: the batcher waits on CFS, the sidecar's polls fail; after it, 60 s more to send
    const out = (s: number): boolean => s >= 30 && s < 630;
    const r = run(
      800,
      (s) => ({
        counters: counters({ sessions_created_total: s >= 700 ? 5 : 4 }),
        ...(out(s) ? { phase: 'waiting_for_cfs' as const, phase_is_wait: true } : {}),
      }),
      (s) => (out(s) ? { ok: false, error: 'unreachable: connect ECONNREFUSED' } : {}),
    );
    expect(r.failedAt).toBeNull();
    expect(r.tl.history.stall.resets.session_created).toBe(1);
  });

  it('standing down for another batcher (pending work, none of its own sessions, for longer than the deadline) never fails liveness', () => {
    // From 30 s the batcher stands down: between cycles its phase is standing_down, and creating says why. A restart
    // cannot end it (the other batcher does), so the clock stops: the batcher's own alert reports it.
    const down = (s: number): boolean => s >= 30 && s < 600;
    const r = run(900, (s) => ({
      counters: counters(),
      ...(down(s)
        ? {
            ...(s % 10 >= 2 ? { phase: 'standing_down' as const, phase_is_wait: true } : {}),
            creating: {
              state: 'standing_down',
              reason: 'another batcher is creating sessions (batcher-0f3c...)',
              next_attempt_ms: null,
              last_attempt_ms: null,
              cfs_trouble_since_ms: null,
            },
          }
        : {}),
    }));
    // Killed only once it stops standing down and still creates nothing: the deadline counted from then.
    expectKilledInTime(r, 600);
    expect(r.tl.history.stall.resets.standing_down).toBe(1);
  });
});
