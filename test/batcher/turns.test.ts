/**
 * The turns the cycle gives the event loop inside its long passes (shared turns.ts: the client's page judging,
 * collect's page filter, filing and prune, check_status's walk over the sessions, the cycle's book check): what an
 * explain request or a heartbeat reads at each of them must be a whole state. With `turnSliceMs` 0 a turn is given
 * at every point that may give one; at each, the test reads what /explain and the heartbeat would, and checks it
 * against the book and the simulator: no component in two batches or two sessions, none of a running session lost,
 * every answer naming the batch that holds the component.
 */
import { Turns } from '@cfs-batcher/shared';
import { batchState, explainFromMemory, heartbeatBody, type Batch } from '@cfs-batcher/batcher';
import {
  fastOptions,
  harnessLifecycle,
  ids,
  putComponents,
  putConfig,
  sessions,
  startHarness,
  type Harness,
} from './harness';

let h: Harness | undefined;
harnessLifecycle(() => h);

interface Turn {
  site: string;
  phase: string;
  problems: string[];
  /** Disabled members still queued at this turn (the prune releases them batch by batch). */
  disabledQueued: number;
}

/** What the cycle's caller of Turns.take() is (the function that gave the turn). */
function callerOf(stack: string | undefined): string {
  const frames = (stack ?? '').split('\n').slice(1);
  const i = frames.findIndex((f) => /Turns\.take|\.take /.test(f) || /mockImplementation|observe/.test(f));
  const caller = frames.slice(Math.max(0, i) + 1).find((f) => !/node:|jest-mock|node_modules/.test(f)) ?? '';
  return /at (?:async )?(?:[\w$]+\.)?([\w$<>]+)/.exec(caller.trim())?.[1] ?? '?';
}

/** What an explain request and a heartbeat would read now, checked against the book and the simulator. */
function problemsNow(hh: Harness, all: readonly string[]): string[] {
  const { state } = hh.batcher;
  const problems: string[] = [];
  const inconsistent = state.book.inconsistency();
  if (inconsistent !== null) problems.push(inconsistent);
  const holders = new Map<string, Batch[]>();
  for (const b of state.book.all()) for (const id of b.members.keys()) holders.set(id, [...(holders.get(id) ?? []), b]);
  for (const [id, bs] of holders) if (bs.length > 1) problems.push(`${id} in ${bs.length} batches`);
  // Every member of a batcher session still pending in CFS is held by the batch of that session.
  for (const s of sessions(hh.sim)) {
    for (const id of s.ansible.limit.split(',')) {
      if (state.book.ownerOf(id)?.sessionName !== s.name) problems.push(`${id} of ${s.name} lost`);
    }
  }
  const clock = { now: hh.clock.now(), offset: 0 };
  for (const id of all) {
    const owner = state.book.ownerOf(id);
    const a = explainFromMemory(state, id, clock) as (Record<string, unknown> & { state: string }) | null;
    if (owner === undefined) {
      if (a !== null && a.state !== 'not_batched') problems.push(`${id}: ${a.state} without a batch`);
      continue;
    }
    if (!owner.members.has(id)) problems.push(`${id}: owner ${owner.id} does not list it`);
    if (batchState(owner) === 'active') {
      const session = a?.session as { name: string; members: number } | undefined;
      if (a?.state !== 'in_session' || session?.name !== owner.sessionName || session.members !== owner.members.size)
        problems.push(`${id}: ${JSON.stringify(a)} for session ${owner.sessionName}`);
    } else if (batchState(owner) === 'queued') {
      const batch = a?.batch as { members: number } | undefined;
      if (!['waiting_for_batch', 'held'].includes(a?.state ?? '') || batch?.members !== owner.members.size)
        problems.push(`${id}: ${JSON.stringify(a)} for queued batch ${owner.id}`);
    }
  }
  const body = heartbeatBody(state, hh.clock.now());
  const queued = state.book.all().filter((b) => batchState(b) === 'queued').length;
  if (
    body.counters.batches_queued !== queued ||
    body.counters.batches_queued + body.counters.batches_active !== state.book.size
  )
    problems.push(`heartbeat counts ${JSON.stringify(body.counters)} for ${state.book.size} batches, ${queued} queued`);
  return problems;
}

it('every turn a cycle gives the event loop shows a whole state to /explain and the heartbeat', async () => {
  h = await startHarness({
    deps: { tuning: { turnSliceMs: 0, sendMaxPerPhase: 3 } },
    clientOptions: { turnSliceMs: 0 },
  });
  const hh = h;
  putConfig(hh.sim);
  fastOptions(hh.sim, { batch_size: 10 });
  const first = ids('x', 60);
  putComponents(hh.sim, first);
  // Cycle 1: six batches, three sent (the phase's count), three queued.
  expect((await hh.batcher.runCycle()).outcome).toBe('ok');
  const queuedBatches = hh.batcher.state.book.queuedBatches();
  expect(queuedBatches).toHaveLength(3);
  expect(sessions(hh.sim)).toHaveLength(3);
  // Two members of each of two queued batches leave pending (disabled): the prune releases them batch by batch.
  const disabled = [...queuedBatches[0]!.members.keys()]
    .slice(0, 2)
    .concat([...queuedBatches[1]!.members.keys()].slice(0, 2));
  putComponents(hh.sim, disabled, { enabled: false });
  const fresh = ids('y', 15);
  putComponents(hh.sim, fresh);
  const all = [...first, ...fresh];

  const turns: Turn[] = [];
  const take = Turns.prototype.take;
  jest.spyOn(Turns.prototype, 'take').mockImplementation(function (this: Turns) {
    // Nothing runs between this call and the turn it gives: the state here is the state the turn exposes.
    turns.push({
      site: callerOf(new Error().stack),
      phase: hh.batcher.heartbeat.currentPhase,
      problems: problemsNow(hh, all),
      disabledQueued: disabled.filter((id) => hh.batcher.state.book.ownerOf(id) !== undefined).length,
    });
    return take.call(this);
  });
  expect((await hh.batcher.runCycle()).outcome).toBe('ok');

  expect(turns.flatMap((t) => t.problems.map((p) => `${t.phase}/${t.site}: ${p}`))).toEqual([]);
  const sites = new Set(turns.map((t) => `${t.phase}/${t.site}`));
  for (const site of [
    'check_status/partitionRecordsInTurns',
    'check_status/followSessions',
    'collect/partitionRecordsInTurns',
    'collect/needed',
    'collect/collect',
    'send/bookInconsistency',
  ])
    expect(sites).toContain(site);
  // A turn inside the prune: one batch's disabled members released, the other's still queued.
  expect(turns.some((t) => t.phase === 'collect' && t.disabledQueued === 2)).toBe(true);
  // After the cycle: the disabled ones are free, the new ones filed, the sessions' members all held.
  for (const id of disabled) expect(hh.batcher.state.book.ownerOf(id)).toBeUndefined();
  for (const id of fresh) expect(hh.batcher.state.book.ownerOf(id)).toBeDefined();
  expect(problemsNow(hh, all)).toEqual([]);
});

it('the check made at each turn finds a component in two batches and the members of a session the book lost', async () => {
  h = await startHarness({ deps: { tuning: { sendMaxPerPhase: 1 } } });
  const hh = h;
  putConfig(hh.sim);
  fastOptions(hh.sim, { batch_size: 10 });
  const all = ids('x', 20);
  putComponents(hh.sim, all);
  expect((await hh.batcher.runCycle()).outcome).toBe('ok');
  expect(problemsNow(hh, all)).toEqual([]);
  const { book } = hh.batcher.state;
  const active = book.all().find((b) => batchState(b) === 'active')!;
  const queued = book.queuedBatches()[0]!;
  const twice = [...queued.members.keys()][0]!;
  book.addRebuilt('other-session', 'cfg', '0', new Map([[twice, null]]), hh.clock.now());
  expect(problemsNow(hh, all)).toContain(`${twice} in 2 batches`);
  book.release(active);
  const lost = [...active.members.keys()][0]!;
  expect(problemsNow(hh, all)).toContain(`${lost} of ${active.sessionName} lost`);
});
