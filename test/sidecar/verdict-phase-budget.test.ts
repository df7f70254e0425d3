/** The stuck phase rule: a working phase past its budget fails, a stamped wait on CFS never does. */
import { Timeline, defaults, healthyFor, heartbeat, ok } from './helpers';

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
