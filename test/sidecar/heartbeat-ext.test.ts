/**
 * The sidecar reads the heartbeat's optional fields through the shared schema: written by the batcher, they come out
 * as written; left out (an older batcher), they are "unknown"; malformed, the whole file is refused naming the field.
 */
import { parseHeartbeat, type Heartbeat } from '@cfs-batcher/shared';
import { heartbeatExt } from '../../sidecar-health/src/heartbeat-ext';
import { T0, heartbeat } from './helpers';

const creating = {
  state: 'cfs_refusing',
  reason: 'POST /v3/sessions answered 500 (3 times)',
  next_attempt_ms: T0 + 10_000,
  last_attempt_ms: T0,
  cfs_trouble_since_ms: null,
} as const;
const pacing = {
  pending_sessions: 3,
  pending_cap: 20,
  creates_per_minute_cap: 30,
  allowance: {
    why: 'halved',
    reason: 'halved: a session has waited 152 s in pending, half of batcher_pending_timeout 300 s',
    ceiling: 1000,
    last_start_s: 1.5,
    oldest_pending_s: 152,
  },
} as const;

/** Through the file's text, as the sidecar reads it. */
function read(hb: unknown): ReturnType<typeof parseHeartbeat> {
  return parseHeartbeat(JSON.stringify(hb));
}

test('fields a batcher writes come out as written', () => {
  const r = read({
    ...heartbeat(),
    creating,
    pacing,
    progress: { last_cfs_answer_ms: T0 - 5 },
    completions_unwritten: 4,
  });
  expect(r.ok && heartbeatExt(r.heartbeat)).toEqual({
    creating,
    pacing,
    lastCfsAnswerMs: T0 - 5,
    progressKnown: true,
    completionsUnwritten: 4,
  });
});

test('fields an older batcher leaves out are unknown, never a failure', () => {
  const r = read(heartbeat());
  expect(r.ok).toBe(true);
  expect(r.ok && heartbeatExt(r.heartbeat)).toEqual({
    creating: null,
    pacing: null,
    lastCfsAnswerMs: null,
    progressKnown: false,
    completionsUnwritten: null,
  });
  expect(heartbeatExt(null).progressKnown).toBe(false);
});

test('a progress block with no answer yet is known, its time unknown', () => {
  const r = read({ ...heartbeat(), progress: { last_cfs_answer_ms: null } });
  expect(r.ok && heartbeatExt(r.heartbeat)).toMatchObject({ progressKnown: true, lastCfsAnswerMs: null });
});

test("a runaway reason is cut where it is quoted, the heartbeat's copy untouched", () => {
  const hb: Heartbeat = { ...heartbeat(), creating: { ...creating, reason: 'x'.repeat(5000) } };
  expect(heartbeatExt(hb).creating!.reason).toHaveLength(300);
  expect(hb.creating!.reason).toHaveLength(5000);
});

test.each([
  ['an unknown creating state', { creating: { ...creating, state: 'napping' } }, /creating\.state/],
  ['a negative pending count', { pacing: { ...pacing, pending_sessions: -1 } }, /pacing\.pending_sessions/],
  [
    'an allowance reason the batcher does not give',
    { pacing: { ...pacing, allowance: { ...pacing.allowance, why: 'guessed' } } },
    /pacing\.allowance\.why/,
  ],
  ['a progress time as text', { progress: { last_cfs_answer_ms: 'now' } }, /progress\.last_cfs_answer_ms/],
  ['a fractional unwritten count', { completions_unwritten: 1.5 }, /completions_unwritten/],
])('%s makes the heartbeat invalid, naming the field', (_what, over, field) => {
  const r = read({ ...heartbeat(), ...over });
  expect(r).toMatchObject({ ok: false, reason: 'invalid', detail: expect.stringMatching(field) });
});
