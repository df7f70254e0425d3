/**
 * Another batcher against the same CFS (batcher/src/rules/foreign.ts, pure): what is foreign, what a restart is, and how two
 * copies of this batcher and the original settle on one creator from the sessions each sees.
 */
import {
  CLOCK_SKEW_MS,
  batcherInstanceId,
  initialForeign,
  instanceIdOf,
  observeForeign,
  quietWindowMs,
  sessionNameFor,
  yieldGraceMs,
  type ForeignInput,
  type ForeignState,
} from '@cfs-batcher/batcher';
import type { CfsSession } from '@cfs-batcher/shared';

const T0 = Date.UTC(2026, 11, 5, 2, 0, 0);
const OPTIONS = { batch_window: 60, batcher_check_interval: 10 };
const QUIET = quietWindowMs(OPTIONS);
const GRACE = yieldGraceMs(OPTIONS);

function session(name: string, startMs: number, limit: string): CfsSession {
  return { name, ansible: { limit }, status: { session: { status: 'running', start_time: String(startMs) } } };
}

/** start_time carried as epoch ms text in these tests: the parser is the phase's business. */
function input(now: number, own: readonly string[] = []): ForeignInput {
  return {
    isOwn: (n) => own.includes(n),
    startOf: (s) => Number(s.status?.session?.start_time),
    now,
    quietMs: QUIET,
    graceMs: GRACE,
  };
}

function copyAt(startMs: number, rand = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee'): ForeignState {
  const st = initialForeign(startMs);
  return { ...st, instanceId: batcherInstanceId(startMs, () => rand) };
}

/** The original's names are plain random uuid4s. */
const originalName = (n: number): string => `batcher-f${String(n).padStart(7, '0')}-1111-4222-8333-444444444444`;

describe('foreign batcher rules', () => {
  it('names every session of one process with its instance id, ordered by process start', () => {
    const older = batcherInstanceId(T0);
    const younger = batcherInstanceId(T0 + 1000);
    expect(older < younger).toBe(true);
    const name = sessionNameFor(older);
    expect(name).toMatch(/^batcher-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(instanceIdOf(name)).toBe(older);
  });

  it('a restart is not another batcher: sessions seen at rebuild, in the book, named by this instance or older than it', () => {
    const st = copyAt(T0);
    st.prior.add('batcher-00000000-0000-4000-8000-000000000001');
    const listed = [
      session('batcher-00000000-0000-4000-8000-000000000001', T0 + 5000, 'a'), // seen at rebuild
      session('batcher-00000000-0000-4000-8000-000000000002', T0 + 5000, 'b'), // an intent restored into the book
      session(sessionNameFor(st.instanceId), T0 + 5000, 'c'), // its own
      session(originalName(1), T0 - CLOCK_SKEW_MS - 1000, 'd'), // from before this process
    ];
    const change = observeForeign(st, listed, input(T0 + 10_000, ['batcher-00000000-0000-4000-8000-000000000002']));
    expect(change).toBeNull();
    expect(st.active.size).toBe(0);
    expect(st.standingDown).toBeNull();
  });

  it('stands down at once for the original, holds its members, and resumes after the quiet window', () => {
    const st = copyAt(T0);
    const now = T0 + 60_000;
    expect(observeForeign(st, [session(originalName(1), now - 2000, 'x1,x2')], input(now))).toBe('stood_down');
    expect(st.standingDown?.why).toBe('elder');
    expect(st.holders.get('x2')).toBe(originalName(1));
    // Still there, nothing new: no second WARNING.
    expect(observeForeign(st, [session(originalName(1), now - 2000, 'x1,x2')], input(now + 10_000))).toBeNull();
    // Its session ended, none new for the quiet window: creating again, nothing held.
    expect(observeForeign(st, [], input(now + QUIET - 1))).toBeNull();
    expect(st.standingDown).not.toBeNull();
    expect(observeForeign(st, [], input(now + QUIET))).toBe('resumed');
    expect(st.standingDown).toBeNull();
    expect(st.holders.size).toBe(0);
  });

  it('two copies settle on the elder from the same listing, and neither stands down for good', () => {
    const elder = copyAt(T0, '11111111-2222-4333-8444-555555555555');
    const younger = copyAt(T0 + 30_000, '99999999-8888-4777-8666-555555555555');
    const now = T0 + 120_000;
    const fromElder = session(sessionNameFor(elder.instanceId), now - 3000, 'a1');
    const fromYounger = session(sessionNameFor(younger.instanceId), now - 2000, 'b1');
    expect(observeForeign(elder, [fromElder, fromYounger], input(now, [fromElder.name]))).toBe('seen');
    expect(observeForeign(younger, [fromElder, fromYounger], input(now, [fromYounger.name]))).toBe('stood_down');
    expect(elder.standingDown).toBeNull();
    expect(elder.holders.get('b1')).toBe(fromYounger.name);
    // The younger one stopped: the elder sees nothing new and resumes its uncontested state after the window.
    observeForeign(elder, [fromElder], input(now + QUIET, [fromElder.name]));
    expect(elder.winningSince).toBeNull();
    // The younger one resumes once the elder has shown nothing new for the window.
    expect(observeForeign(younger, [], input(now + QUIET))).toBe('resumed');
  });

  it('yields to a batcher that keeps creating after this one won (the original never stands down)', () => {
    const st = copyAt(T0, '11111111-2222-4333-8444-555555555555');
    // Named like a younger copy's sessions, but it never stands down.
    const younger = batcherInstanceId(T0 + 50_000, () => '99999999-8888-4777-8666-555555555555');
    const lookalike = (n: number, start: number) => session(sessionNameFor(younger), start, `n${n}`);
    const now = T0 + 120_000;
    const first = lookalike(1, now - 1000);
    expect(observeForeign(st, [first], input(now))).toBe('seen');
    expect(st.standingDown).toBeNull();
    // Within the grace a copy would have stood down; a new one after it means it will not.
    const later = lookalike(2, now + GRACE);
    expect(observeForeign(st, [first, later], input(now + GRACE + 1))).toBe('stood_down');
    expect(st.standingDown?.why).toBe('persists');
  });
});
