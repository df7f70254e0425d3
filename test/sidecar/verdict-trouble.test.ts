/**
 * Tries to break the verdict with CFS's trouble (refused, slow or unanswered calls) and wall-clock jumps: none of
 * them may fail liveness, while a loop that stops trying, or stops altogether, still must. The batcher beats every
 * second, as its heartbeat contract requires; the optional fields (creating, progress) ride on the heartbeat.
 */
import type { Heartbeat } from '@cfs-batcher/shared';
import { T0, Timeline, heartbeat, ok } from './helpers';

type Creating = {
  state: string;
  reason: string;
  next_attempt_ms: number | null;
  last_attempt_ms: number | null;
  cfs_trouble_since_ms: number | null;
};

/** A heartbeat with the optional fields the batcher adds (creating, progress), set only when given. */
function withExt(
  base: Partial<Heartbeat>,
  ext: { creating?: Creating; lastAnswerMs?: number | null },
): Partial<Heartbeat> {
  const extra: Record<string, unknown> = {};
  if (ext.creating) extra.creating = ext.creating;
  if (ext.lastAnswerMs !== undefined) extra.progress = { last_cfs_answer_ms: ext.lastAnswerMs };
  return { ...base, ...extra };
}

interface Script {
  seconds: number;
  /** Phase (and its start, batcher wall clock) at second s. */
  phase?: (s: number) => { phase: Heartbeat['phase']; startedAt: number };
  /** The batcher's wall clock at second s (default: the sidecar's, unjumped). */
  batcherWall?: (s: number, sidecarWall: number) => number;
  /** Batcher's creating block at second s; undefined = the field is absent. */
  creating?: (s: number, wall: number) => Creating | undefined;
  lastAnswer?: (s: number, wall: number) => number | null | undefined;
  /** False from the second the loop stops (no more beats). */
  beating?: (s: number) => boolean;
  /** The sidecar's wall-clock offset at second s (a jump of the node's clock). */
  wallJump?: (s: number) => number;
}

/** Runs one beat a second for `seconds`, with CFS showing pending work and no active batcher session. */
function run(script: Script): { tl: Timeline; failures: { s: number; reason: string; message: string }[] } {
  const tl = new Timeline();
  const failures: { s: number; reason: string; message: string }[] = [];
  let seq = 1;
  let jump = 0;
  let last: Heartbeat | null = null;
  const lastError = { at_ms: T0, kind: 'http', message: 'POST /v3/sessions answered 500' };
  for (let s = 0; s < script.seconds; s++) {
    if (s > 0) tl.advance(1000);
    const j = script.wallJump?.(s) ?? 0;
    if (j !== jump) {
      tl.now = { wallMs: tl.now.wallMs + (j - jump), monoMs: tl.now.monoMs };
      jump = j;
    }
    if (s % 10 === 0) tl.cfsSays({ pendingComponents: true, activeSession: null });
    const wall = script.batcherWall?.(s, tl.now.wallMs) ?? tl.now.wallMs;
    if (script.beating?.(s) ?? true) {
      const ph = script.phase?.(s) ?? { phase: 'sleep' as const, startedAt: wall };
      const creating = script.creating?.(s, wall);
      const lastAnswerMs = script.lastAnswer?.(s, wall);
      const base = {
        sequence: seq++,
        written_at_ms: wall,
        phase: ph.phase,
        phase_started_at_ms: ph.startedAt,
        cfs: { last_success_ms: T0, last_error: lastError },
      };
      last = heartbeat(
        withExt(base, { ...(creating ? { creating } : {}), ...(lastAnswerMs !== undefined ? { lastAnswerMs } : {}) }),
      );
    }
    const v = last ? tl.read(ok(last)) : null;
    if (v && !v.live) failures.push({ s, reason: v.reason, message: v.message });
  }
  return { tl, failures };
}

/** The batcher tries every `every` seconds (its check interval is 10 s) and CFS says no. */
const refusing = (every: number, state = 'cfs_refusing', stopAt = Infinity) => {
  let lastAttempt: number | null = null;
  return (s: number, wall: number): Creating => {
    if (s % every === 0 && s < stopAt) lastAttempt = wall;
    return {
      state,
      reason: 'POST /v3/sessions answered 500 (3 times)',
      next_attempt_ms: wall + every * 1000,
      last_attempt_ms: lastAttempt,
      cfs_trouble_since_ms: T0,
    };
  };
};

describe('CFS trouble never fails liveness', () => {
  it('refused creates for 10 minutes, tried every check interval: no failure, the excuse is shown', () => {
    const { tl, failures } = run({ seconds: 600, creating: refusing(10) });
    expect(failures).toEqual([]);
    // the clock is paused while the batcher reports the trouble and keeps trying: it neither ages nor restarts
    expect(tl.history.stall).toMatchObject({ pausedBy: 'cfs_trouble', lastReset: null });
    expect(tl.history.stall.excusedMs).toBeGreaterThan(580_000);
    expect(tl.last.verdict.details.stallMs).toBeLessThan(tl.last.verdict.details.progressDeadlineMs ?? 0);
    expect(tl.last.verdict.details.cfsTrouble).toMatch(
      /^creating cfs_refusing \(POST \/v3\/sessions answered 500 \(3 times\)\), last try/,
    );
    expect(tl.last.verdict.message).toMatch(/pending work waits on CFS/);
  });

  it('hanging completion PATCHes: a check_status phase of 8 minutes that gets a timeout every 10 s, no failure', () => {
    const start = T0 + 5000;
    const { failures } = run({
      seconds: 500,
      phase: (s) =>
        s < 5 ? { phase: 'sleep', startedAt: T0 + s * 1000 } : { phase: 'check_status', startedAt: start },
      creating: refusing(10, 'cfs_timeout'),
      // every PATCH runs into the 10 s client timeout: an answer (of sorts) every 10 s
      lastAnswer: (s) => T0 + Math.floor(s / 10) * 10_000,
    });
    expect(failures).toEqual([]);
  });

  it('a slow send phase of 5 minutes that keeps getting answers is not stuck', () => {
    const { failures } = run({
      seconds: 320,
      phase: (s) => (s < 10 ? { phase: 'sleep', startedAt: T0 + s * 1000 } : { phase: 'send', startedAt: T0 + 10_000 }),
      creating: refusing(1, 'ok'),
      lastAnswer: (_s, wall) => wall - 400,
    });
    expect(failures.filter((f) => f.reason === 'phase_stuck')).toEqual([]);
  });

  it.each([3_600_000, -3_600_000])('a wall-clock jump of %i ms (both containers) fails nothing', (jumpMs) => {
    const { failures, tl } = run({
      seconds: 300,
      // a long check_status that began before the jump, and a first read after the jump of a file stamped before it
      phase: (s) =>
        s < 100 ? { phase: 'sleep', startedAt: T0 + s * 1000 } : { phase: 'check_status', startedAt: T0 + 100_000 },
      batcherWall: (s, w) => (s === 200 ? w - jumpMs : w),
      creating: refusing(10),
      lastAnswer: (_s, wall) => wall,
      wallJump: (s) => (s >= 200 ? jumpMs : 0),
    });
    expect(failures).toEqual([]);
    expect(tl.last.verdict.details.heartbeatAgeMs).toBe(0);
  });

  it('a batcher clock that jumps alone (its stamps an hour off) fails nothing', () => {
    const { failures } = run({
      seconds: 300,
      batcherWall: (s, w) => (s >= 100 ? w + 3_600_000 : w),
      creating: refusing(10),
    });
    expect(failures).toEqual([]);
  });
});

describe('a loop that stops still fails', () => {
  it('claims CFS trouble but stops trying: no_progress once the stall passes the deadline', () => {
    const { failures } = run({ seconds: 400, creating: refusing(10, 'cfs_refusing', 150) });
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]!.reason).toBe('no_progress');
    expect(failures[0]!.message).toMatch(
      /batcher reports creating cfs_refusing .* but has stopped trying: last try seen \d+ s ago \(limit 25 s\)/,
    );
  });

  it('no creating block (an older batcher): the plain no_progress rule applies', () => {
    const { failures } = run({ seconds: 300 });
    expect(failures[0]?.reason).toBe('no_progress');
  });

  it('a working phase past its budget with no CFS answer within the allowance: phase_stuck', () => {
    const { failures } = run({
      seconds: 200,
      phase: (s) => (s < 5 ? { phase: 'sleep', startedAt: T0 + s * 1000 } : { phase: 'send', startedAt: T0 + 5000 }),
      creating: refusing(10),
      lastAnswer: (s) => T0 + Math.min(s, 30) * 1000, // answers stop 30 s in
    });
    expect(failures[0]).toMatchObject({ reason: 'phase_stuck' });
    expect(failures[0]!.message).toMatch(
      /^phase send began 12\d s ago \(budget 120 s\), last CFS answer \d+ s ago \(allowance 60 s\)/,
    );
  });

  it.each([
    ['sleep', false],
    ['waiting_for_cfs', true],
  ] as const)('a stopped loop (%s, claiming CFS trouble) fails heartbeat_stale at the 14 s limit', (phase, wait) => {
    const tl = new Timeline();
    let seq = 1;
    const creating = refusing(10);
    for (let s = 0; s < 60; s++) {
      tl.advance(1000);
      expect(
        tl.write(
          withExt(
            { sequence: seq++, phase, phase_is_wait: wait, phase_started_at_ms: T0 },
            { creating: creating(s, tl.now.wallMs), lastAnswerMs: tl.now.wallMs },
          ),
        ).live,
      ).toBe(true);
    }
    const frozen = tl.history.lastGood!;
    tl.advance(13_900);
    expect(tl.read(ok(frozen)).live).toBe(true);
    tl.advance(200);
    expect(tl.read(ok(frozen))).toMatchObject({ live: false, reason: 'heartbeat_stale' });
  });
});
