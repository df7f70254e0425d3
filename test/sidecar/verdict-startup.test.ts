/** The startup rule: the grace a new sidecar or batcher instance gets, and when /startupz turns green or red. */
import { T0, Timeline, bad, defaults, healthyFor, heartbeat, ok } from './helpers';

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
