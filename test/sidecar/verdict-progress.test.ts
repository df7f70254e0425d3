/** The progress rule: components left pending in CFS with no batcher session fail liveness past the deadline. */
import { thresholdsFromEnv } from '@cfs-batcher/sidecar-health';
import { progressDeadlineMs } from '../../sidecar-health/src/verdict';
import { T0, Timeline, defaults, healthyFor, heartbeat } from './helpers';

describe('progress rule (sidecar checks CFS itself)', () => {
  function stalled(
    tl: Timeline,
    forMs: number,
    over: Parameters<Timeline['write']>[0] = {},
    cfs: Parameters<Timeline['cfsSays']>[0] = {},
  ): ReturnType<Timeline['write']> {
    let seq = (tl.history.current?.maxSequence ?? 0) + 1;
    let v = tl.write({ sequence: seq++, ...over });
    for (let elapsed = 0; elapsed < forMs; elapsed += 5000) {
      tl.advance(5000);
      tl.cfsSays({ ok: true, pendingComponents: true, activeSession: null, ...cfs });
      v = tl.write({ sequence: seq++, ...over });
    }
    return v;
  }

  it('fails when components stay pending past the deadline with no batcher session created or active', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    // the stall clock starts at the first CFS answer showing pending work (5 s into the run)
    expect(stalled(tl, 125_000)).toMatchObject({ live: true, reason: 'ok' });
    expect(tl.last.verdict.details.stallMs).toBe(120_000);
    const v = stalled(tl, 5000);
    expect(v).toMatchObject({ live: false, reason: 'no_progress' });
    expect(v.message).toMatch(
      /components pending in CFS for 125 s with no batcher session created or active \(deadline 120 s\)/,
    );
  });

  it('a batcher whose session creates CFS keeps refusing is trying, not stalled: no restart', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    let seq = (tl.history.current?.maxSequence ?? 0) + 1;
    let v = tl.last.verdict;
    for (let elapsed = 0; elapsed < 300_000; elapsed += 5000) {
      tl.advance(5000);
      tl.cfsSays({ ok: true, pendingComponents: true, activeSession: null });
      // every 30 s a create attempt fails (503), which the heartbeat reports as the last CFS error
      const at = T0 + Math.floor((tl.now.wallMs - T0) / 30_000) * 30_000;
      v = tl.write({
        sequence: seq++,
        cfs: {
          last_success_ms: tl.now.wallMs,
          last_error: { at_ms: at, kind: 'http', message: '503 from CFS for POST' },
        },
      });
      expect(v.live).toBe(true);
    }
    expect(v.reason).toBe('ok');
  });

  it('pending records the batcher must skip (pending_seen 0) are not its stall', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const zero = {
      pending_seen: 0,
      batches_queued: 0,
      batches_active: 0,
      sessions_created_total: 0,
      last_session_created_ms: null,
    };
    // cycles go on (two collections in a row must see nothing schedulable before the clock stops)
    let cycle = 10;
    for (let i = 0; i < 60; i++)
      expect(stalled(tl, 5000, { cycle: cycle++, counters: zero })).toMatchObject({ live: true, reason: 'ok' });
    expect(tl.history.stall).toMatchObject({ stallMs: null, stoppedBy: 'nothing_schedulable' });
  });

  it('one failed CFS poll pauses the stall clock instead of resetting it', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    stalled(tl, 100_000);
    const before = tl.history.stall.stallMs!;
    tl.advance(5000);
    tl.cfsSays({ ok: false });
    tl.write({ sequence: (tl.history.current?.maxSequence ?? 0) + 1 });
    expect(tl.history.stall).toMatchObject({ stallMs: before + 5000, pausedBy: 'cfs_unknown' });
    expect(stalled(tl, 30_000)).toMatchObject({ live: false, reason: 'no_progress' });
    expect(tl.history.stall.excusedMs).toBe(5000);
  });

  it('the deadline follows batch_window and the check interval, or SIDECAR_PROGRESS_DEADLINE_SECONDS', () => {
    const tl = new Timeline(defaults({ SIDECAR_PROGRESS_DEADLINE_SECONDS: '30' }));
    healthyFor(tl, 70_000);
    expect(stalled(tl, 40_000).reason).toBe('no_progress');
    const tl2 = new Timeline(defaults({}, { progressIntervals: 2 }));
    healthyFor(tl2, 70_000);
    const opts = { batcher_check_interval: 5, batch_window: 20, batch_size: 25, batcher_pending_timeout: 300 };
    expect(stalled(tl2, 25_000, { options: opts }).reason).toBe('ok');
    expect(stalled(tl2, 15_000, { options: opts }).reason).toBe('no_progress');
  });

  it('any session creation restarts the stall clock', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    stalled(tl, 100_000);
    tl.advance(5000);
    const createdAt = tl.now.wallMs;
    tl.write({
      sequence: 9000,
      counters: {
        pending_seen: 3,
        batches_queued: 0,
        batches_active: 1,
        sessions_created_total: 1,
        last_session_created_ms: createdAt,
      },
    });
    let seq = 9001;
    let v;
    for (let i = 0; i < 20; i++) {
      tl.advance(5000);
      tl.cfsSays({ ok: true, pendingComponents: true, activeSession: null });
      v = tl.write({
        sequence: seq++,
        counters: {
          pending_seen: 3,
          batches_queued: 0,
          batches_active: 0,
          sessions_created_total: 1,
          last_session_created_ms: createdAt,
        },
      });
    }
    expect(v).toMatchObject({ live: true, reason: 'ok' });
    expect(tl.last.verdict.details.stallMs).toBe(100_000);
  });

  it.each([
    ['an active batcher session', {}, { activeSession: { name: 'batcher-1', status: 'running' } }],
    ['no pending components', {}, { pendingComponents: false }],
    ['batcher_disable', { disabled: true }, {}],
    [
      'the batcher waiting on CFS (a partial outage the sidecar does not see)',
      { phase: 'waiting_for_cfs', phase_is_wait: true },
      {},
    ],
    ['session-creation backoff', { backoff: { active: true, seconds: 60, until_ms: T0 + 1e9 } }, {}],
    ['CFS unreachable', {}, { ok: false, error: 'unreachable: connect ECONNREFUSED', pendingComponents: undefined }],
  ] as const)('never fails with %s', (_name, over, cfs) => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const v = stalled(tl, 400_000, over, cfs);
    expect(v).toMatchObject({ live: true, reason: 'ok' });
    // stopped (no obligation) or paused (CFS trouble): either way it never passes the deadline
    expect(tl.history.stall.stallMs ?? 0).toBeLessThanOrEqual(5000);
  });

  it('a CFS outage (batcher waiting on CFS, sidecar queries failing) never fails liveness', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const start = tl.now.wallMs;
    let seq = 300;
    for (let i = 0; i < 60; i++) {
      tl.advance(5000);
      tl.cfsSays({ ok: false, error: 'timeout: CFS did not answer in 3000 ms' });
      const v = tl.write({
        sequence: seq++,
        phase: 'waiting_for_cfs',
        phase_is_wait: true,
        phase_started_at_ms: start,
      });
      expect(v.live).toBe(true);
    }
    expect(tl.cfs.latest?.ok).toBe(false);
  });
});

describe('progress deadline floor', () => {
  it('is never shorter than three CFS rounds of the sidecar, so a short session between two samples is not a stall', () => {
    const t = thresholdsFromEnv({});
    const fast = heartbeat({
      options: { batcher_check_interval: 1, batch_window: 1, batch_size: 10, batcher_pending_timeout: 300 },
    });
    expect(progressDeadlineMs(fast, t)).toBe(30_000); // 1 + 6 x 1 = 7 s, raised to 3 x 10 s polls
    const defaults10 = heartbeat({
      options: { batcher_check_interval: 10, batch_window: 60, batch_size: 25, batcher_pending_timeout: 300 },
    });
    expect(progressDeadlineMs(defaults10, t)).toBe(120_000);
  });
});
