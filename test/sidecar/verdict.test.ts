import fc from 'fast-check';
import { REASONS, parsePhaseBudgets, thresholdsFromEnv } from '@cfs-batcher/sidecar-health';
import { ConfigError } from '@cfs-batcher/shared';
import { progressDeadlineMs } from '../../sidecar-health/src/verdict';
import { T0, Timeline, bad, defaults, heartbeat, ok } from './helpers';

/** Runs a batcher that writes every `step` ms, advancing the sequence, until `untilMs`. */
function healthyFor(tl: Timeline, untilMs: number, step = 5000, over: Parameters<Timeline['write']>[0] = {}): number {
  let seq = (tl.history.current?.maxSequence ?? 0) + 1;
  for (let elapsed = 0; elapsed < untilMs && elapsed < 3_600_000; elapsed += step) {
    tl.advance(step);
    const v = tl.write({ sequence: seq++, ...over });
    expect(v.live).toBe(true);
  }
  return seq;
}

describe('startup rule', () => {
  it('gives a starting sidecar a grace, then fails a missing heartbeat', () => {
    const tl = new Timeline();
    let v = tl.read(bad('missing', 'no heartbeat file at /hb'));
    expect(v).toMatchObject({ live: true, reason: 'starting' });
    tl.advance(59_000);
    v = tl.read(bad('missing', 'no heartbeat file at /hb'));
    expect(v).toMatchObject({ live: true, reason: 'starting' });
    tl.advance(2_000);
    v = tl.read(bad('missing', 'no heartbeat file at /hb'));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_missing' });
    expect(v.message).toMatch(/no valid heartbeat for 61 s since the sidecar started \(no heartbeat file at \/hb\)/);
  });

  it('counts a new instance id as a restart, gives it a grace, and fails it once the grace and freshness run out', () => {
    const tl = new Timeline();
    tl.write({ instance_id: 'a', sequence: 1 });
    tl.advance(45_000);
    tl.read(ok(heartbeat({ instance_id: 'a', sequence: 1, written_at_ms: T0 })));
    // past the grace of the sidecar start: the old instance is stale
    tl.advance(20_000);
    expect(tl.read(ok(heartbeat({ instance_id: 'a', sequence: 1, written_at_ms: T0 })))).toMatchObject({
      live: false,
      reason: 'heartbeat_stale',
    });
    // the batcher restarted: a new instance writes once, then hangs at once
    const bStart = tl.now.wallMs;
    const bFirst = heartbeat({
      instance_id: 'b',
      sequence: 1,
      started_at_ms: bStart,
      written_at_ms: bStart,
      phase: 'sleep',
      phase_started_at_ms: bStart,
    });
    expect(tl.read(ok(bFirst))).toMatchObject({ live: true, reason: 'ok' });
    expect(tl.history.restarts).toBe(1);
    // one heartbeat is no proof of a live loop (it may be a file left behind): the startup gate waits
    expect(tl.last.startup).toMatchObject({ ready: false });
    expect(tl.last.startup.message).toMatch(
      /^instance b \(started 0\.0 s ago\): its heartbeat \(sequence 1\) has not advanced/,
    );
    tl.advance(50_000);
    expect(tl.read(ok(bFirst))).toMatchObject({ live: true, reason: 'starting' });
    tl.advance(11_000);
    const v = tl.read(ok(bFirst));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_stale' });
  });

  it('ends the grace once the new instance is seen advancing: a hang right after start-up fails at the freshness limit', () => {
    const tl = new Timeline();
    tl.write({ instance_id: 'a', sequence: 1 });
    healthyFor(tl, 70_000, 5000, { instance_id: 'a' });
    const bStart = tl.now.wallMs;
    tl.read(
      ok(
        heartbeat({
          instance_id: 'b',
          sequence: 1,
          started_at_ms: bStart,
          written_at_ms: bStart,
          phase: 'starting',
          phase_started_at_ms: bStart,
        }),
      ),
    );
    tl.advance(1000);
    const second = heartbeat({
      instance_id: 'b',
      sequence: 2,
      started_at_ms: bStart,
      written_at_ms: tl.now.wallMs,
      phase: 'sleep',
      phase_started_at_ms: tl.now.wallMs,
    });
    expect(tl.read(ok(second))).toMatchObject({ live: true, reason: 'ok' });
    expect(tl.history.current?.proven).toBe(true);
    tl.advance(41_000); // well inside the 60 s grace, past interval 10 s + budget 30 s
    expect(tl.read(ok(second))).toMatchObject({ live: false, reason: 'heartbeat_stale' });
  });

  it('keeps /startupz red while the file belongs to an old instance, green once the new one is seen advancing', () => {
    const tl = new Timeline();
    // The file left by the previous instance: started 10 minutes ago, last written a moment ago (it crashed).
    const old = heartbeat({ instance_id: 'old', started_at_ms: T0 - 600_000, written_at_ms: T0 - 1000, sequence: 900 });
    tl.read(ok(old));
    expect(tl.last.startup.ready).toBe(false);
    expect(tl.last.startup.message).toMatch(
      /^instance old \(started 600 s ago\): .*has not advanced.*waiting for a live loop/,
    );
    expect(tl.last.startup.message).not.toMatch(/new instance/);
    tl.advance(3000);
    const newcomer = { instance_id: 'new', started_at_ms: tl.now.wallMs - 500, phase: 'starting' as const };
    tl.write({ ...newcomer, sequence: 1, phase_started_at_ms: tl.now.wallMs - 500 });
    expect(tl.last.startup.ready).toBe(false);
    tl.advance(1000);
    tl.write({ ...newcomer, sequence: 2, phase_started_at_ms: tl.now.wallMs - 1500 });
    expect(tl.last.startup).toMatchObject({ ready: true });
    expect(tl.last.startup.message).toMatch(
      /^instance new \(started 1\.5 s ago\) is alive: heartbeat sequence 2 advanced 0\.0 s ago$/,
    );
  });

  it('passes /startupz for a healthy batcher 66 s old that a fresh sidecar finds, as soon as it sees it advance', () => {
    const tl = new Timeline();
    const started = { instance_id: 'steady', started_at_ms: T0 - 66_000 };
    tl.write({ ...started, sequence: 70 });
    expect(tl.last.startup.ready).toBe(false);
    tl.advance(1000);
    tl.write({ ...started, sequence: 71 });
    expect(tl.last.startup).toMatchObject({ ready: true });
    expect(tl.last.startup.message).toMatch(/^instance steady \(started 67 s ago\) is alive/);
    // and it stays green for as long as the loop lives, hours later too
    healthyFor(tl, 3_600_000, 5000, started);
    expect(tl.last.startup.ready).toBe(true);
    expect(tl.last.startup.message).not.toMatch(/waiting for the new instance/);
  });

  it('closes /startupz a few seconds after the heartbeat stops advancing (the last file of a crashed instance)', () => {
    const tl = new Timeline();
    const seq = healthyFor(tl, 20_000, 1000);
    expect(tl.last.startup.ready).toBe(true);
    const frozen = heartbeat({ sequence: seq - 1, written_at_ms: tl.now.wallMs });
    tl.advance(3000);
    expect(tl.read(ok(frozen)).live).toBe(true);
    expect(tl.last.startup.ready).toBe(true);
    tl.advance(1000);
    expect(tl.read(ok(frozen)).live).toBe(true);
    expect(tl.last.startup.ready).toBe(false);
    expect(tl.last.startup.message).toMatch(/its heartbeat last advanced 4\.0 s ago \(the gate wants 3\.0 s\)/);
  });

  it('keeps /startupz red for a stale heartbeat of a recently started instance', () => {
    const tl = new Timeline(defaults({ SIDECAR_STARTUP_GRACE_SECONDS: '120' }));
    tl.read(ok(heartbeat({ instance_id: 'x', started_at_ms: T0 - 5000, written_at_ms: T0 - 50_000 })));
    expect(tl.last.startup.ready).toBe(false);
    expect(tl.last.startup.message).toMatch(/has not advanced/);
  });
});

describe('freshness rule', () => {
  it.each([
    { interval: 10, okAt: 39_000, failAt: 41_000, limit: 40 },
    { interval: 60, okAt: 89_000, failAt: 91_000, limit: 90 },
  ])(
    'SIDECAR_FRESHNESS_SECONDS=0: limit = live batcher_check_interval $interval + 30 s cycle budget',
    ({ interval, okAt, failAt, limit }) => {
      const tl = new Timeline(defaults({ SIDECAR_FRESHNESS_SECONDS: '0' }));
      const opts = {
        batcher_check_interval: interval,
        batch_window: 120,
        batch_size: 25,
        batcher_pending_timeout: 300,
      };
      const seq = healthyFor(tl, 90_000, 5000, { options: opts });
      const last = heartbeat({
        sequence: seq,
        written_at_ms: tl.now.wallMs,
        phase: 'sleep',
        phase_started_at_ms: tl.now.wallMs,
        options: opts,
      });
      tl.read(ok(last));
      tl.advance(okAt);
      expect(tl.read(ok(last))).toMatchObject({ live: true, reason: 'ok' });
      tl.advance(failAt - okAt);
      const v = tl.read(ok(last));
      expect(v).toMatchObject({ live: false, reason: 'heartbeat_stale' });
      expect(v.message).toBe(
        `no heartbeat for ${failAt / 1000} s (limit ${limit} s); last phase sleep began ${failAt / 1000} s ago`,
      );
    },
  );

  it.each([10, 60])('default: a fixed 14 s limit whatever the check interval (%i s)', (interval) => {
    const tl = new Timeline();
    const opts = { batcher_check_interval: interval, batch_window: 120, batch_size: 25, batcher_pending_timeout: 300 };
    const seq = healthyFor(tl, 30_000, 1000, { options: opts });
    const last = heartbeat({
      sequence: seq,
      written_at_ms: tl.now.wallMs,
      phase: 'sleep',
      phase_started_at_ms: tl.now.wallMs,
      options: opts,
    });
    tl.read(ok(last));
    tl.advance(13_900);
    expect(tl.read(ok(last))).toMatchObject({ live: true, reason: 'ok' });
    tl.advance(200);
    expect(tl.read(ok(last))).toMatchObject({ live: false, reason: 'heartbeat_stale' });
  });

  it('honours SIDECAR_CYCLE_BUDGET_SECONDS (with SIDECAR_FRESHNESS_SECONDS=0)', () => {
    const tl = new Timeline(defaults({ SIDECAR_CYCLE_BUDGET_SECONDS: '5', SIDECAR_FRESHNESS_SECONDS: '0' }));
    const seq = healthyFor(tl, 70_000);
    const last = heartbeat({ sequence: seq, written_at_ms: tl.now.wallMs });
    tl.read(ok(last));
    tl.advance(16_000);
    expect(tl.read(ok(last)).reason).toBe('heartbeat_stale');
  });

  it('a heartbeat rewritten without advancing the sequence is not fresh', () => {
    const tl = new Timeline(defaults({ SIDECAR_FRESHNESS_SECONDS: '0' }));
    const seq = healthyFor(tl, 70_000) - 1; // the last sequence written
    for (let i = 0; i < 8; i++) {
      tl.advance(5000);
      tl.write({ sequence: seq }); // same sequence, new written_at
    }
    tl.advance(5000);
    const v = tl.write({ sequence: seq - 3 }); // an older copy does not count either
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_not_advancing' });
    expect(v.message).toMatch(/sequence \d+ unchanged for 45 s \(limit 40 s\)/);
  });

  it('a written_at_ms in the future (clock skew, copied file) cannot fake freshness', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const future = heartbeat({
      sequence: 5000,
      written_at_ms: tl.now.wallMs + 3_600_000,
      phase_started_at_ms: tl.now.wallMs,
    });
    tl.read(ok(future));
    tl.advance(14_100);
    expect(tl.read(ok(future))).toMatchObject({ live: false, reason: 'heartbeat_stale' });
  });
});

describe('stuck phase rule', () => {
  it('fails a working phase past its budget even while the heartbeat is stamped', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const start = tl.now.wallMs;
    let seq = 1000;
    tl.write({ sequence: seq++, phase: 'collect', phase_started_at_ms: start });
    for (let i = 0; i < 36; i++) {
      tl.advance(5000);
      expect(tl.write({ sequence: seq++, phase: 'collect', phase_started_at_ms: start }).live).toBe(true);
    }
    tl.advance(5000);
    const v = tl.write({ sequence: seq, phase: 'collect', phase_started_at_ms: start });
    expect(v).toMatchObject({ live: false, reason: 'phase_stuck' });
    expect(v.message).toMatch(/^phase collect began 185 s ago \(budget 180 s\); last heartbeat 0.0 s ago/);
  });

  it('fails a silent working phase at the freshness limit, not at its longer budget', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const hb = heartbeat({
      sequence: 999,
      written_at_ms: tl.now.wallMs,
      phase: 'rebuild',
      phase_started_at_ms: tl.now.wallMs,
    });
    tl.read(ok(hb));
    tl.advance(13_000);
    expect(tl.read(ok(hb))).toMatchObject({ live: true, reason: 'ok' });
    tl.advance(2_000);
    expect(tl.read(ok(hb)).reason).toBe('heartbeat_stale');
  });

  it('fails a working phase that keeps stamping but never ends, at its budget', () => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const started = tl.now.wallMs;
    let seq = 1000;
    for (let i = 0; i < 30; i++) {
      expect(
        tl.read(
          ok(
            heartbeat({
              sequence: seq++,
              written_at_ms: tl.now.wallMs,
              phase: 'rebuild',
              phase_started_at_ms: started,
            }),
          ),
        ),
      ).toMatchObject({ live: true });
      tl.advance(10_000);
    }
    tl.advance(1_000);
    expect(
      tl.read(
        ok(heartbeat({ sequence: seq, written_at_ms: tl.now.wallMs, phase: 'rebuild', phase_started_at_ms: started })),
      ).reason,
    ).toBe('phase_stuck');
  });

  it('uses per-phase budgets from SIDECAR_PHASE_BUDGETS', () => {
    const tl = new Timeline(defaults({ SIDECAR_PHASE_BUDGETS: 'send=20' }));
    healthyFor(tl, 70_000);
    const hb = heartbeat({
      sequence: 999,
      written_at_ms: tl.now.wallMs,
      phase: 'send',
      phase_started_at_ms: tl.now.wallMs,
    });
    tl.read(ok(hb));
    tl.advance(21_000);
    expect(tl.read(ok(hb)).reason).toBe('phase_stuck');
  });

  it.each(['waiting_for_cfs', 'backoff'] as const)('never fails a stamped dependency wait (%s)', (phase) => {
    const tl = new Timeline();
    healthyFor(tl, 70_000);
    const start = tl.now.wallMs;
    let seq = 500;
    for (let i = 0; i < 120; i++) {
      tl.advance(5000);
      const v = tl.write({
        sequence: seq++,
        phase,
        phase_is_wait: true,
        phase_started_at_ms: start,
        backoff: { active: phase === 'backoff', seconds: 3600, until_ms: start + 3_600_000 },
      });
      expect(v).toMatchObject({ live: true, reason: 'ok' });
    }
    // but a wait that stops stamping is a dead loop
    tl.advance(41_000);
    expect(
      tl.read(
        ok(
          heartbeat({
            sequence: seq - 1,
            phase,
            phase_is_wait: true,
            written_at_ms: tl.now.wallMs - 41_000,
            phase_started_at_ms: start,
          }),
        ),
      ).reason,
    ).toBe('heartbeat_stale');
  });
});

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
    const tl2 = new Timeline(defaults({ SIDECAR_PROGRESS_INTERVALS: '2' }));
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

describe('unreadable heartbeat files', () => {
  it.each([
    ['not_json', 'heartbeat is not JSON (Unexpected end of JSON input)'],
    ['empty', 'heartbeat file is empty'],
    ['oversized', 'heartbeat is 99999 bytes (limit 65536)'],
    ['unreadable', 'cannot open /hb: EACCES'],
    ['invalid', 'heartbeat does not match format 1: sequence: expected number'],
  ] as const)('a %s file is reported, and fails only after the freshness limit', (reason, detail) => {
    const tl = new Timeline();
    const seq = healthyFor(tl, 70_000);
    tl.advance(1000);
    tl.write({ sequence: seq });
    tl.advance(1000);
    let v = tl.read(bad(reason, detail));
    expect(v).toMatchObject({ live: true, reason: 'ok' });
    expect(v.details.readProblem).toBe(`${reason}: ${detail}`);
    tl.advance(11_000);
    expect(tl.read(bad(reason, detail)).live).toBe(true);
    tl.advance(3000);
    v = tl.read(bad(reason, detail));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_invalid' });
    expect(v.message).toContain(detail);
  });

  it('a vanished file fails as missing after the freshness limit; a good read recovers', () => {
    const tl = new Timeline();
    const seq = healthyFor(tl, 70_000);
    tl.advance(41_000);
    expect(tl.read(bad('missing')).reason).toBe('heartbeat_missing');
    tl.advance(1000);
    expect(tl.write({ sequence: seq + 1 }).reason).toBe('ok');
  });

  it('a file that never parsed fails as invalid after the startup grace', () => {
    const tl = new Timeline();
    tl.read(bad('not_json', 'garbage'));
    tl.advance(61_000);
    const v = tl.read(bad('not_json', 'garbage'));
    expect(v).toMatchObject({ live: false, reason: 'heartbeat_invalid' });
    expect(v.message).toContain('garbage');
  });
});

describe('robustness', () => {
  it('any sequence of reads and CFS answers yields a known reason and an admin sentence', () => {
    const readArb = fc.oneof(
      fc.record({
        seq: fc.integer({ min: 0, max: 50 }),
        inst: fc.constantFrom('a', 'b'),
        skew: fc.integer({ min: -100_000, max: 100_000 }),
        phase: fc.constantFrom<'sleep' | 'collect' | 'waiting_for_cfs' | 'starting'>(
          'sleep',
          'collect',
          'waiting_for_cfs',
          'starting',
        ),
      }),
      fc.constantFrom<'missing' | 'not_json' | 'oversized'>('missing', 'not_json', 'oversized'),
    );
    const step = fc.record({
      dt: fc.integer({ min: 0, max: 60_000 }),
      read: readArb,
      cfs: fc.option(fc.record({ ok: fc.boolean(), pendingComponents: fc.boolean() })),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const tl = new Timeline();
        for (const s of steps) {
          tl.advance(s.dt);
          if (s.cfs) tl.cfsSays({ ...s.cfs, activeSession: null });
          const v =
            typeof s.read === 'string'
              ? tl.read(bad(s.read))
              : tl.read(
                  ok(
                    heartbeat({
                      instance_id: s.read.inst,
                      sequence: s.read.seq,
                      written_at_ms: tl.now.wallMs + s.read.skew,
                      phase: s.read.phase,
                      phase_is_wait: s.read.phase === 'waiting_for_cfs',
                      phase_started_at_ms: tl.now.wallMs - 1000,
                    }),
                  ),
                );
          expect(REASONS).toContain(v.reason);
          expect(v.live).toBe(v.reason === 'ok' || v.reason === 'starting');
          expect(v.message.length).toBeGreaterThan(10);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('configuration', () => {
  it('parses phase budgets and rejects what cannot be right', () => {
    expect(parsePhaseBudgets('rebuild=300, send=5')).toEqual({ rebuild: 300_000, send: 5000 });
    expect(() => parsePhaseBudgets('rebuld=300')).toThrow(/unknown phase "rebuld"/);
    expect(() => parsePhaseBudgets('sleep=10')).toThrow(/takes no budget/);
    expect(() => parsePhaseBudgets('send')).toThrow(ConfigError);
    expect(() => thresholdsFromEnv({ SIDECAR_CYCLE_BUDGET_SECONDS: 'ten' })).toThrow(/SIDECAR_CYCLE_BUDGET_SECONDS/);
  });

  it('documents its defaults', () => {
    const t = thresholdsFromEnv({});
    expect(t).toMatchObject({
      startupGraceMs: 60_000,
      cycleBudgetMs: 30_000,
      progressDeadlineMs: null,
      progressIntervals: 6,
    });
    expect(t.phaseBudgetsMs).toMatchObject({
      rebuild: 300_000,
      options: 60_000,
      check_status: 120_000,
      collect: 180_000,
      send: 120_000,
    });
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
});
