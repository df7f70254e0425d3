/** batcher/src/rules/allowance.ts: the pending-sessions allowance as a pure function of what the pending lists showed. */
import fc from 'fast-check';
import {
  ALLOWANCE_FLOOR,
  ALLOWANCE_START,
  allowed,
  floorAtMs,
  halveAtMs,
  initialAllowance,
  observePending,
  promptMs,
  type Allowance,
  type AllowanceBounds,
  type PendingObservation,
} from '@cfs-batcher/batcher';

const B: AllowanceBounds = { ceiling: 1000, pendingTimeoutS: 60 };

/** One read: `starts` sessions seen starting after `ms` each, `pending` left pending, the oldest created at `since`. */
function obs(now: number, starts: number, ms: number, pending: number, since: number | null): PendingObservation {
  return { now, startedAfterMs: Array(starts).fill(ms), pendingBefore: pending + starts, oldestPendingSince: since };
}

const observation = (maxNow: number) =>
  fc.record({
    dt: fc.integer({ min: 0, max: maxNow }),
    starts: fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 50 }),
    pendingBefore: fc.integer({ min: 0, max: 2000 }),
    oldestAge: fc.option(fc.integer({ min: 0, max: 120_000 })),
  });

const bounds = fc.record({
  ceiling: fc.integer({ min: 1, max: 5000 }),
  pendingTimeoutS: fc.integer({ min: 1, max: 3600 }),
});

/** Replays a run of observations; returns every allowance along the way. */
function replay(
  b: AllowanceBounds,
  steps: { dt: number; starts: number[]; pendingBefore: number; oldestAge: number | null }[],
) {
  let a: Allowance = initialAllowance();
  let now = 0;
  const seen: { before: Allowance; o: PendingObservation; after: Allowance }[] = [];
  for (const s of steps) {
    now += s.dt;
    const o: PendingObservation = {
      now,
      startedAfterMs: s.starts,
      pendingBefore: s.pendingBefore,
      oldestPendingSince: s.oldestAge === null ? null : now - s.oldestAge,
    };
    const after = observePending(a, o, b);
    seen.push({ before: a, o, after });
    a = after;
  }
  return seen;
}

it('stays within the floor and the ceiling whatever the operator does', () => {
  fc.assert(
    fc.property(bounds, fc.array(observation(60_000), { maxLength: 60 }), (b, steps) => {
      for (const { after } of replay(b, steps)) {
        expect(after.value).toBeLessThanOrEqual(b.ceiling);
        expect(after.value).toBeGreaterThanOrEqual(Math.min(ALLOWANCE_FLOOR, b.ceiling));
      }
    }),
  );
});

it('never grows on a read that showed no prompt start, nor while a session ages past half the timeout', () => {
  fc.assert(
    fc.property(bounds, fc.array(observation(60_000), { maxLength: 60 }), (b, steps) => {
      for (const { before, o, after } of replay(b, steps)) {
        const start = Math.min(Math.max(before.value, Math.min(ALLOWANCE_FLOOR, b.ceiling)), b.ceiling);
        const prompt = o.startedAfterMs.some((ms) => ms <= promptMs(b));
        const age = o.oldestPendingSince === null ? 0 : o.now - o.oldestPendingSince;
        if (!prompt || age >= halveAtMs(b)) expect(after.value).toBeLessThanOrEqual(start);
        // Grows by at most one per prompt start: doubling per round of starts at most.
        expect(after.value - start).toBeLessThanOrEqual(o.startedAfterMs.length);
      }
    }),
  );
});

it('a session pending 3/4 of the timeout drops it to the floor; half of it halves it', () => {
  fc.assert(
    fc.property(bounds, fc.integer({ min: 8, max: 5000 }), (b, value) => {
      const a: Allowance = { ...initialAllowance(), value };
      const t = b.pendingTimeoutS * 1000;
      const floor = Math.min(ALLOWANCE_FLOOR, b.ceiling);
      expect(observePending(a, obs(t, 0, 0, 5, t - floorAtMs(b)), b)).toMatchObject({ value: floor, why: 'floor' });
      const halved = observePending(a, obs(t, 0, 0, 5, t - halveAtMs(b)), b);
      expect(halved.value).toBe(Math.max(floor, Math.min(value, b.ceiling) / 2));
      expect(halved.why).toBe('halved');
    }),
  );
});

it('drops to the floor once: later reads of the same old session change nothing (one log line, not one per read)', () => {
  const t = floorAtMs(B);
  const a = observePending({ ...initialAllowance(), value: 300 }, obs(t, 0, 0, 100, 0), B);
  expect(a).toMatchObject({ value: ALLOWANCE_FLOOR, why: 'floor', shrunkAt: t });
  expect(observePending(a, obs(t + 5000, 0, 0, 100, 0), B)).toMatchObject({ why: 'floor', shrunkAt: t });
});

it('halves once per generation: again only when a session created after the halving ages as far', () => {
  const half = halveAtMs(B);
  let a = observePending({ ...initialAllowance(), value: 400 }, obs(half, 0, 0, 100, 0), B);
  expect(allowed(a)).toBe(200);
  a = observePending(a, obs(half + 1000, 0, 0, 100, 0), B); // the same old session, older still: no second halving
  expect(allowed(a)).toBe(200);
  a = observePending(a, obs(half * 2 + 2000, 0, 0, 100, half + 1), B); // one created after the halving
  expect(allowed(a)).toBe(100);
});

it('prompt starts grow it only while it is in use, up to the ceiling; slow starts hold it', () => {
  const a0 = initialAllowance();
  expect(a0.value).toBe(ALLOWANCE_START);
  // 40 pending, 10 start within 1 s: +10.
  const grown = observePending(a0, obs(1000, 10, 1000, 30, 500), B);
  expect(allowed(grown)).toBe(50);
  expect(grown.why).toBe('grown');
  // 3 pending of 40 allowed: prompt starts say nothing about more.
  expect(allowed(observePending(a0, obs(1000, 3, 1000, 0, null), B))).toBe(40);
  // Starts slower than a tenth of the timeout: held, not grown.
  const held = observePending(a0, obs(10_000, 10, promptMs(B) + 1, 30, 500), B);
  expect(allowed(held)).toBe(40);
  expect(held.why).toBe('holding');
  // Prompt starts up to the ceiling.
  const top = observePending({ ...a0, value: 995 }, obs(1000, 10, 1000, 990, 500), B);
  expect(top).toMatchObject({ value: 1000, why: 'ceiling' });
});

it('back from the floor to hundreds within a minute of the operator starting promptly again (1-2 s starts)', () => {
  // The operator starts each session 1.5 s after its create and the batcher keeps the allowance full: every
  // 1.5 s all that was pending starts, and each prompt start adds one.
  let a: Allowance = { ...initialAllowance(), value: ALLOWANCE_FLOOR, why: 'floor', shrunkAt: 0 };
  let now = 100_000;
  for (let t = 0; t < 60_000; t += 1500) {
    now += 1500;
    const n = allowed(a);
    a = observePending(a, obs(now, n, 1500, 0, null), B);
  }
  expect(allowed(a)).toBe(B.ceiling);
});
