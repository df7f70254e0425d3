/** Progress stamps inside a phase: throttled, serialized, and only from the loop's own work. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat, setLogSilent } from '@cfs-batcher/shared';
import { HeartbeatWriter } from '../../batcher/src/heartbeat-writer';

setLogSilent(true);

const body = () => ({
  cycle: 0,
  last_cycle: null,
  options: { batcher_check_interval: 10, batch_window: 60, batch_size: 25, batcher_pending_timeout: 300 },
  disabled: false,
  backoff: { active: false, seconds: 0, until_ms: null },
  cfs: { last_success_ms: null, last_error: null },
  counters: { pending_seen: 0, batches_queued: 0, batches_active: 0, sessions_created_total: 0, last_session_created_ms: null },
});

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'hb-progress-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('stamps progress at most once a second and never races two writes', async () => {
  let t = 1_000_000;
  const file = path.join(dir, 'hb.json');
  const w = new HeartbeatWriter(file, () => t, t, body);
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
  const w = new HeartbeatWriter(file, () => t, t, body);
  await w.stamp('send');
  t += 2000;
  w.progress();
  await w.stamp();
  const r = await readHeartbeat(file);
  expect(r.ok && r.heartbeat).toMatchObject({ phase: 'send', phase_started_at_ms: 5_000_000, written_at_ms: 5_002_000 });
});
