/** Heartbeat from the main loop, metrics endpoint. */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat, type Phase } from '@cfs-batcher/shared';
import { createBatcher, serveMetrics, serverPort } from '@cfs-batcher/batcher';
import { captureLogs, putComponents, putConfig, startHarness, fastOptions, type Harness } from './harness';

let h: Harness;
let logs: ReturnType<typeof captureLogs>;
let dir: string;

beforeEach(() => {
  logs = captureLogs();
  dir = mkdtempSync(path.join(os.tmpdir(), 'batcher-hb-'));
});
afterEach(async () => {
  logs.stop();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('writes the heartbeat at start, at each phase and at the end of a cycle; sequence advances on every write', async () => {
  h = await startHarness({
    seed: (sim) => {
      putConfig(sim);
      fastOptions(sim);
      putComponents(sim, ['x1']);
    },
  });
  const file = path.join(dir, 'hb.json');
  const seen: { phase: Phase; sequence: number }[] = [];
  const ac = new AbortController();
  const b = createBatcher({
    client: h.client,
    heartbeatPath: file,
    clock: h.clock,
    sleep: async (ms) => {
      const r = await readHeartbeat(file);
      if (r.ok) seen.push({ phase: r.heartbeat.phase, sequence: r.heartbeat.sequence });
      h.clock.advance(ms);
      // The sleep is stamped every second: abort in the second cycle's sleep.
      if (seen.length >= 2 && b.state.cycles >= 2) ac.abort();
    },
  });
  await b.run(ac.signal);
  const final = await readHeartbeat(file);
  expect(final.ok).toBe(true);
  if (!final.ok) return;
  expect(final.heartbeat.phase).toBe('stopping');
  expect(final.heartbeat.cycle).toBe(2);
  expect(final.heartbeat.last_cycle?.outcome).toBe('ok');
  expect(final.heartbeat.counters.sessions_created_total).toBe(1);
  expect(final.heartbeat.options.batch_window).toBe(0);
  expect(new Set(seen.map((s) => s.phase))).toEqual(new Set(['sleep']));
  expect(seen.length).toBe(11); // 10 one-second steps of the 10 s interval, then the second cycle's first
  // starting, rebuild, options, check_status, collect, send, end, sleep = 8 writes before the first sleep
  expect(seen[0]!.sequence).toBe(8);
  expect(seen[1]!.sequence).toBeGreaterThan(seen[0]!.sequence);
  expect(final.heartbeat.sequence).toBe(seen.at(-1)!.sequence + 1);
  // every second step of the sleep is a write
  expect(seen[1]!.sequence).toBe(seen[0]!.sequence + 1);
});

it('a wait phase (waiting_for_cfs) keeps stamping with phase_is_wait true', async () => {
  h = await startHarness({ seed: (sim) => putConfig(sim) });
  h.sim.faults.add({ match: 'GET /v3/options', action: { type: 'status', status: 503 } });
  const file = path.join(dir, 'hb.json');
  const stamps: { phase: Phase; wait: boolean; seq: number }[] = [];
  const ac = new AbortController();
  const b = createBatcher({
    client: h.client,
    heartbeatPath: file,
    clock: h.clock,
    random: () => 0.999,
    tuning: { waitStepMs: 250 },
    sleep: async (ms) => {
      const r = await readHeartbeat(file);
      if (r.ok) stamps.push({ phase: r.heartbeat.phase, wait: r.heartbeat.phase_is_wait, seq: r.heartbeat.sequence });
      h.clock.advance(ms);
      if (stamps.length >= 6) ac.abort();
    },
  });
  await b.run(ac.signal);
  expect(stamps.every((s) => s.phase === 'waiting_for_cfs' && s.wait)).toBe(true);
  for (let i = 1; i < stamps.length; i++) expect(stamps[i]!.seq).toBeGreaterThan(stamps[i - 1]!.seq);
});

it('a failed heartbeat write is logged (rate-limited), counted, and does not stop the loop', async () => {
  h = await startHarness({ seed: (sim) => putConfig(sim) });
  const b = createBatcher({
    client: h.client,
    heartbeatPath: path.join(dir, 'missing-dir', 'hb.json'),
    clock: h.clock,
    sleep: async () => undefined,
  });
  expect((await b.runCycle()).outcome).toBe('ok');
  h.clock.advance(1000);
  expect((await b.runCycle()).outcome).toBe('ok');
  const failures = (await b.metrics.heartbeatWriteFailures.get()).values[0]!.value;
  expect(failures).toBeGreaterThanOrEqual(10);
  expect(logs.lines.filter((l) => l.message.startsWith('Unable to write heartbeat')).length).toBe(1);
  h.clock.advance(61_000);
  await b.runCycle();
  expect(logs.lines.filter((l) => l.message.startsWith('Unable to write heartbeat')).length).toBe(2);
});

it('serves the metrics on /metrics', async () => {
  h = await startHarness({ seed: (sim) => putConfig(sim) });
  await h.batcher.runCycle();
  const server = await serveMetrics(h.batcher.metrics.registry, 0, '127.0.0.1');
  try {
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${serverPort(server)}/metrics`, (res) => {
          let data = '';
          res.on('data', (c: Buffer) => (data += c.toString()));
          res.on('end', () => resolve(data));
        })
        .on('error', reject);
    });
    expect(body).toContain('cfs_batcher_cycles_total{outcome="ok"} 1');
    expect(body).toContain('cfs_batcher_batches{state="queued"} 0');
    expect(body).toContain('cfs_batcher_disabled 0');
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

it('while session creation is halted the sleep between cycles is a stamped backoff wait', async () => {
  h = await startHarness({ seed: (sim) => putConfig(sim) });
  const file = path.join(dir, 'hb.json');
  const stamps: { phase: Phase; wait: boolean; active: boolean }[] = [];
  const ac = new AbortController();
  const b = createBatcher({
    client: h.client,
    heartbeatPath: file,
    clock: h.clock,
    sleep: async (ms) => {
      const r = await readHeartbeat(file);
      if (r.ok)
        stamps.push({ phase: r.heartbeat.phase, wait: r.heartbeat.phase_is_wait, active: r.heartbeat.backoff.active });
      h.clock.advance(ms);
      if (stamps.length >= 3) ac.abort();
    },
  });
  b.state.backoff = { recent: Array<boolean>(20).fill(false), currentS: 60, startMs: h.clock.now() };
  await b.run(ac.signal);
  expect(stamps).toEqual(Array(3).fill({ phase: 'backoff', wait: true, active: true }));
});
