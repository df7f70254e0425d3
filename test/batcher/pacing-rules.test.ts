/** batcher/src/rules/pacing.ts and batcher/src/rules/creating.ts's attempt bookkeeping, as pure functions. */
import { CfsError } from '@cfs-batcher/shared';
import {
  createRoom,
  initialCreating,
  initialPacing,
  noteAttempt,
  noteCreate,
  pacingGate,
  troubleSince,
  waitForOperator,
} from '@cfs-batcher/batcher';

const http = (status: number) =>
  new CfsError('http', `answered ${status}`, 'POST', 'http://cfs/v3/sessions', '/v3/sessions', status);

it('the pending cap holds until CFS lists fewer pending; the rate cap reopens 60 s after the oldest create', () => {
  const s = initialPacing();
  const caps = { pendingSessionsCap: 2, createsPerMinuteCap: 3 };
  expect(pacingGate(s, caps, 0)).toBeNull();
  noteCreate(s, 0);
  noteCreate(s, 1000);
  expect(pacingGate(s, caps, 1000)).toMatchObject({ why: 'pending_cap', until: null });
  s.pendingSessions = 0; // check_status: the operator started them
  expect(pacingGate(s, caps, 2000)).toBeNull();
  noteCreate(s, 2000);
  expect(pacingGate(s, caps, 3000)).toMatchObject({ why: 'rate', until: 60_000 });
  s.pendingSessions = 0;
  expect(pacingGate(s, caps, 59_999)).toMatchObject({ why: 'rate' });
  expect(pacingGate(s, caps, 60_000)).toBeNull();
  expect(pacingGate(s, { pendingSessionsCap: 0, createsPerMinuteCap: 0 }, 0)).toBeNull(); // 0 = no cap
});

it('attempts: a run of failures keeps its start; a 409 create or a 404 lookup is no trouble and no recovery; a create success ends it', () => {
  const t = initialCreating();
  noteAttempt(t, 10, 'POST /v3/sessions', http(500));
  noteAttempt(t, 20, 'POST /v3/sessions', http(500));
  expect(t.trouble.create).toMatchObject({
    state: 'cfs_refusing',
    what: 'POST /v3/sessions answered 500',
    count: 2,
    since: 10,
  });
  noteAttempt(t, 25, 'GET /v3/sessions/{name}', http(404));
  noteAttempt(t, 26, 'POST /v3/sessions', http(409));
  expect(t.trouble.create?.since).toBe(10);
  expect(t.lastAttemptAt).toBe(26);
  noteAttempt(
    t,
    30,
    'PATCH /v3/components/{id}',
    new CfsError('timeout', 'timed out', 'PATCH', 'u', '/v3/components/{id}'),
  );
  expect(t.trouble.patch).toMatchObject({ state: 'cfs_timeout', since: 30 });
  noteAttempt(t, 40, 'POST /v3/sessions');
  expect(t.trouble.create).toBeNull();
  expect(t.recoveredAt).toBe(40);
  expect(troubleSince(t)).toBe(30); // the PATCHes are still failing
  noteAttempt(t, 50, 'PATCH /v3/components/{id}');
  expect(troubleSince(t)).toBeNull();
  noteAttempt(t, 60, 'POST /v3/sessions', new CfsError('aborted', 'stop', 'POST', 'u', '/v3/sessions'));
  expect(t.lastAttemptAt).toBe(50); // a SIGTERM abort is no attempt
});

it('the room for creates is the smaller of both caps, never negative, unbounded without caps', () => {
  const s = initialPacing();
  expect(createRoom(s, { pendingSessionsCap: 0, createsPerMinuteCap: 0 }, 0)).toBe(Infinity);
  s.pendingSessions = 38;
  expect(createRoom(s, { pendingSessionsCap: 40, createsPerMinuteCap: 0 }, 0)).toBe(2);
  for (let i = 0; i < 5; i++) noteCreate(s, i);
  expect(createRoom(s, { pendingSessionsCap: 40, createsPerMinuteCap: 6 }, 10)).toBe(0); // 43 pending > the cap
  s.pendingSessions = 0;
  expect(createRoom(s, { pendingSessionsCap: 40, createsPerMinuteCap: 6 }, 10)).toBe(1);
  expect(createRoom(s, { pendingSessionsCap: 40, createsPerMinuteCap: 6 }, 60_004)).toBe(6); // the window moved on
});

it('waits for the operator only at the pending cap, while it starts sessions and the next read fits the slice', () => {
  const policy = { pacingPollMs: 100, pacingStallMs: 1000 };
  const cap = { why: 'pending_cap' as const, reason: 'r', until: null };
  const w = { now: 0, sliceEnd: 10_000, sinceProgressMs: 0, pollsWithoutProgress: 0 };
  expect(waitForOperator(cap, policy, w)).toBe(true);
  expect(waitForOperator({ why: 'rate', reason: 'r', until: 5 }, policy, w)).toBe(false);
  expect(waitForOperator(cap, policy, { ...w, sinceProgressMs: 1000 })).toBe(false); // stalled
  expect(waitForOperator(cap, policy, { ...w, pollsWithoutProgress: 10 })).toBe(false); // stalled, clock frozen
  expect(waitForOperator(cap, policy, { ...w, now: 9_900 })).toBe(false); // no room for another read
});
