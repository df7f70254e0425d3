/** Progress stamps inside a phase: throttled, serialized, and only from the loop's own work. */
import { spawnSync } from 'node:child_process';
import { closeSync, constants as fsConstants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { atomicTempPath, parseHeartbeat, readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { HeartbeatWriter, WRITE_DEADLINE_MS } from '../../batcher/src/heartbeat-writer';

setLogSilent(true);

const body = () => ({
  cycle: 0,
  last_cycle: null,
  options: { batcher_check_interval: 10, batch_window: 60, batch_size: 25, batcher_pending_timeout: 300 },
  disabled: false,
  backoff: { active: false, seconds: 0, until_ms: null },
  cfs: { last_success_ms: null, last_error: null },
  counters: {
    pending_seen: 0,
    batches_queued: 0,
    batches_active: 0,
    sessions_created_total: 0,
    last_session_created_ms: null,
  },
});

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'hb-progress-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('stamps progress at most once a second and never races two writes', async () => {
  let t = 1_000_000;
  const file = path.join(dir, 'hb.json');
  const w = new HeartbeatWriter({ path: file, wall: () => t, mono: () => t, startedAt: t, body });
  await w.stamp('collect');
  expect(w.lastSequence).toBe(1);
  w.progress(); // same millisecond: throttled
  t += 500;
  w.progress(); // 0.5 s later: throttled
  expect(w.lastSequence).toBe(1);
  t += 600;
  for (let i = 0; i < 20; i++) w.progress(); // a burst of CFS answers: one write
  await w.stamp(); // waits behind the write in flight
  expect(w.lastSequence).toBe(3);
  expect(w.failures).toBe(0);
  const r = await readHeartbeat(file);
  expect(r.ok && r.heartbeat).toMatchObject({ sequence: 3, phase: 'collect', written_at_ms: t });
});

it('a phase change keeps its start time across progress stamps', async () => {
  let t = 5_000_000;
  const file = path.join(dir, 'hb.json');
  const w = new HeartbeatWriter({ path: file, wall: () => t, mono: () => t, startedAt: t, body });
  await w.stamp('send');
  t += 2000;
  w.progress();
  await w.stamp();
  const r = await readHeartbeat(file);
  expect(r.ok && r.heartbeat).toMatchObject({
    phase: 'send',
    phase_started_at_ms: 5_000_000,
    written_at_ms: 5_002_000,
  });
});

it('a heartbeat write that hangs (stuck volume) holds the loop at most WRITE_DEADLINE_MS, counted as a failure', async () => {
  // The writer's temp file is a FIFO with no reader: opening it for writing blocks, as on a stuck volume.
  const file = path.join(dir, 'hb.json');
  const tmp = atomicTempPath(file);
  expect(spawnSync('mkfifo', [tmp]).status).toBe(0);
  let failed = 0;
  const w = new HeartbeatWriter({
    path: file,
    wall: () => Date.now(),
    mono: () => performance.now(),
    startedAt: performance.now(),
    body,
    onFailure: () => (failed += 1),
  });
  const t0 = performance.now();
  await w.stamp('collect');
  const took = performance.now() - t0;
  expect(took).toBeGreaterThanOrEqual(WRITE_DEADLINE_MS - 50);
  expect(failed).toBe(1);
  expect(w.failures).toBe(1);
  // While it stays stuck, later stamps return at once instead of queueing behind it
  const t1 = performance.now();
  await w.stamp('send');
  expect(performance.now() - t1).toBeLessThan(WRITE_DEADLINE_MS / 2);
  expect(w.failures).toBe(2);
  // Unblock the stuck open so the background write can end (and the worker thread is freed).
  const fd = openSync(tmp, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  await new Promise((r) => setTimeout(r, 200));
  closeSync(fd);
});

it('the heartbeat schema takes the optional creating, pacing, progress and completions fields, and a file without them still parses', () => {
  const base = {
    format: 1,
    instance_id: 'i',
    pid: 1,
    started_at_ms: 1,
    written_at_ms: 2,
    sequence: 1,
    phase: 'sleep',
    phase_started_at_ms: 1,
    phase_is_wait: false,
    ...body(),
  };
  expect(parseHeartbeat(JSON.stringify(base)).ok).toBe(true);
  const full = {
    ...base,
    creating: {
      state: 'cfs_refusing',
      reason: 'POST /v3/sessions answered 500 (3 times)',
      next_attempt_ms: 5,
      last_attempt_ms: 4,
      cfs_trouble_since_ms: 3,
    },
    pacing: { pending_sessions: 2, pending_cap: 40, creates_per_minute_cap: 240 },
    progress: { last_cfs_answer_ms: 4 },
    completions_unwritten: 3,
  };
  const r = parseHeartbeat(JSON.stringify(full));
  expect(r.ok && r.heartbeat.creating?.state).toBe('cfs_refusing');
  expect(parseHeartbeat(JSON.stringify({ ...full, creating: { ...full.creating, state: 'asleep' } })).ok).toBe(false);
});

it('start times are reported as wall time, stable from write to write, and keep their true age across a wall-clock jump', async () => {
  let mono = 1_000_000;
  let wallOffset = 0;
  const file = path.join(dir, 'hb.json');
  const w = new HeartbeatWriter({
    path: file,
    wall: () => mono + wallOffset,
    mono: () => mono,
    startedAt: mono,
    body,
  });
  const read = async () => {
    const r = await readHeartbeat(file);
    if (!r.ok) throw new Error(r.detail);
    return r.heartbeat;
  };
  await w.stamp('collect');
  mono += 700;
  wallOffset = 300; // NTP-sized drift: not a jump, nothing moves
  await w.stamp();
  expect(await read()).toMatchObject({
    started_at_ms: 1_000_000,
    phase_started_at_ms: 1_000_000,
    written_at_ms: 1_001_000,
  });
  wallOffset = 3_600_000;
  mono += 1000;
  await w.stamp();
  // one hour later on the wall clock, and the phase is still 1.7 s old
  expect(await read()).toMatchObject({ phase_started_at_ms: 4_600_000, written_at_ms: 4_601_700 });
});

it('reports a stored instant the same at every write while the two clocks drift by fractions of a millisecond', async () => {
  // The sidecar reads a change of last_session_created_ms (and of the other stamps) as news: a stamp that flips
  // between two adjacent milliseconds from write to write would read as a session created at every beat.
  let wall = 1_700_000_000_000;
  let mono = 5_000.25;
  const createdAt = 4_000.6; // a monotonic instant the state holds
  const file = path.join(dir, 'hb.json');
  const seen: number[] = [];
  const w = new HeartbeatWriter({
    path: file,
    wall: () => wall,
    mono: () => mono,
    startedAt: mono,
    body: (offset) => {
      const stamp = Math.floor(createdAt + offset);
      seen.push(stamp);
      return { ...body(), counters: { ...body().counters, last_session_created_ms: stamp } };
    },
  });
  for (let i = 0; i < 6; i++) {
    wall += 1000;
    mono += 1000 + (i % 2 === 0 ? 0.45 : -0.45);
    await w.stamp('collect');
  }
  expect(seen).toHaveLength(6);
  expect(new Set(seen).size).toBe(1);
  const r = await readHeartbeat(file);
  expect(r.ok && r.heartbeat.counters.last_session_created_ms).toBe(seen[0]);
});
