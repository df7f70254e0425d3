/** The freshness rule: how long a heartbeat may go unwritten, or rewritten without advancing, before liveness fails. */
import { Timeline, defaults, healthyFor, heartbeat, ok } from './helpers';

describe('freshness rule', () => {
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

  it('a heartbeat rewritten without advancing the sequence is not fresh', () => {
    const tl = new Timeline(defaults({}, { freshnessMs: 40_000 }));
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
