/**
 * Soak: ambiguous session creates injected at random (lost answers after commit: reset, 404 with and
 * without a body, 502, a 201 that is not a session; late commits 7 s after the client saw a reset; late commits
 * while the client hangs, each followed by a SIGKILL of the batcher and a restart 0.5 s later) plus spurious 404
 * lookups, over N components against a slow operator. Reports, from the simulator's own history: overlaps (must be
 * 0), components not configured in the end (0), pending-timeout deletions (0), the pending-session peak; and the
 * sidecar's /livez failures when it runs. Bounded in time and in fault count (seeded, so a run can be replayed).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readHeartbeat } from '@cfs-batcher/shared';
import { httpJson, sleep, startNode, startSim } from './bench-procs';
import type { Proc as Child } from './proc';
import { countComponentStatuses } from './sim-client';

export interface SoakOptions {
  components: number;
  ambiguous: number;
  batchSize: number;
  maxStartsPerSecond: number;
  timeoutMs: number;
  sidecar: boolean;
  /** Chance that a POST is held in flight and the batcher SIGKILLed (after the other faults did not fire). */
  killProbability: number;
  log: (m: string) => void;
}

export interface SoakRun {
  components: number;
  sessions: number;
  ambiguousInjected: number;
  byFault: Record<string, number>;
  spuriousLookups: number;
  kills: number;
  overlaps: number;
  notConfigured: number;
  pendingTimeoutDeletions: number;
  pendingPeak: number;
  livezFailures: number | null;
  livezReasons: Record<string, number>;
  seconds: number;
  finished: boolean;
}

interface Hist {
  name: string;
  created_ms: number;
  running_ms: number | null;
  ended_ms: number | null;
  deleted_ms: number | null;
}

/** The POST faults, in the order they are tried; their `times` add up to the ambiguous-create budget. */
function postFaults(total: number, o: { killProbability: number }): { label: string; rule: Record<string, unknown> }[] {
  const share = (f: number) => Math.max(1, Math.round(total * f));
  const post = (
    label: string,
    p: number,
    times: number,
    action: Record<string, unknown>,
    phase = 'after',
    seed = 1,
  ) => ({
    label,
    rule: { match: 'POST /v3/sessions', phase, action, scope: { probability: p, times, seed } },
  });
  return [
    post('lost:reset', 0.15, share(0.35), { type: 'reset' }, 'after', 11),
    post('lost:404-problem', 0.08, share(0.15), { type: 'status', status: 404, title: 'Not Found' }, 'after', 12),
    post('lost:404-empty', 0.06, share(0.1), { type: 'status', status: 404, body: 'empty' }, 'after', 13),
    post('lost:502', 0.07, share(0.1), { type: 'status', status: 502 }, 'after', 14),
    post('odd-201', 0.06, share(0.1), { type: 'status', status: 201, body: {} }, 'after', 15),
    post('late-commit:reset', 0.1, share(0.16), { type: 'late-commit', ms: 7000, client: 'reset' }, 'before', 16),
    post(
      'late-commit:kill',
      o.killProbability,
      share(0.04),
      { type: 'late-commit', ms: 7000, client: 'hang' },
      'before',
      17,
    ),
  ];
}

/** Most sessions pending at once (created, not yet running or ended), from the history. */
function pendingPeak(h: Hist[], end: number): number {
  const ev: [number, number][] = [];
  for (const s of h) {
    ev.push([s.created_ms, 1]);
    ev.push([s.running_ms ?? s.ended_ms ?? end, -1]);
  }
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let cur = 0;
  let peak = 0;
  for (const [, d] of ev) peak = Math.max(peak, (cur += d));
  return peak;
}

export async function runSoak(o: SoakOptions): Promise<SoakRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-soak-'));
  const scenario = path.join(dir, 'scenario.json');
  const hbFile = path.join(dir, 'hb', 'heartbeat.json');
  const faults = postFaults(o.ambiguous, o);
  writeFileSync(
    scenario,
    JSON.stringify({
      generate: { components: o.components, configurations: 3 },
      options: { batcher_check_interval: 1, batch_window: 1, batch_size: o.batchSize },
      operator: { pendingMs: 500, runningMs: 1500, maxStartsPerSecond: o.maxStartsPerSecond },
      faults: [
        ...faults.map((f) => f.rule),
        {
          match: 'GET /v3/sessions/batcher-*',
          action: { type: 'status', status: 404, title: 'Session not found.' },
          scope: { probability: 0.3, seed: 21 },
        },
      ],
    }),
  );
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const { child: sim, origin } = await startSim(scenario).catch((err: unknown) => {
    cleanup();
    throw err;
  });
  const faultList = async () =>
    ((await httpJson('GET', `${origin}/__sim/faults`)).json as { faults: { id: string; fired: number }[] }).faults;
  const ruleIds = await faultList()
    .then((l) => l.map((r) => r.id))
    .catch(async (err: unknown) => {
      await sim.stop();
      cleanup();
      throw err;
    });
  const fired = new Map<string, number>();
  const env = {
    CFS_API_URL: `${origin}/v3`,
    HEARTBEAT_PATH: hbFile,
    METRICS_PORT: '0',
    LOG_LEVEL: 'WARNING',
    CFS_REQUEST_TIMEOUT_MS: '3000',
  };
  mkdirSync(path.dirname(hbFile), { recursive: true });
  let batcher: Child = startNode('batcher/dist/main.js', [], env);
  let sidecar: Child | null = null;
  let healthPort = 0;
  if (o.sidecar) {
    healthPort = 20_000 + Math.floor(Math.random() * 20_000);
    sidecar = startNode('sidecar-health/dist/main.js', [], {
      HEALTH_PORT: String(healthPort),
      HEALTH_HOST: '127.0.0.1',
      HEARTBEAT_PATH: hbFile,
      CFS_API_URL: `${origin}/v3`,
      LOG_LEVEL: 'WARNING',
    });
  }
  const t0 = Date.now();
  let kills = 0;
  let livezFailures = 0;
  const livezReasons: Record<string, number> = {};
  let finished = false;
  let lastLivez = 0;
  try {
    for (let i = 0; Date.now() - t0 < o.timeoutMs && i < 1_000_000; i++) {
      await sleep(100);
      const list = await faultList();
      const killRule = ruleIds[faults.length - 1];
      for (const id of ruleIds) {
        const now = list.find((r) => r.id === id);
        const before = fired.get(id) ?? 0;
        const times = (faults[ruleIds.indexOf(id)]?.rule.scope as { times?: number } | undefined)?.times;
        const count = now ? now.fired : (times ?? before); // a rule past its `times` leaves the list
        fired.set(id, count);
        if (id === killRule && count > before && batcher.alive) {
          // The POST is held in flight by the simulator: the batcher dies now, and comes back 0.5 s later.
          batcher.signal('SIGKILL');
          kills += 1;
          for (let j = 0; j < 50 && batcher.alive; j++) await sleep(20);
          await sleep(500);
          batcher = startNode('batcher/dist/main.js', [], env);
        }
      }
      if (!batcher.alive) {
        o.log(`  batcher exited on its own: ${batcher.tail(3)}`);
        await sleep(500);
        batcher = startNode('batcher/dist/main.js', [], env);
      }
      if (sidecar && Date.now() - lastLivez >= 1000) {
        lastLivez = Date.now();
        const r = await httpJson('GET', `http://127.0.0.1:${healthPort}/livez`, undefined, 2000).catch(() => null);
        if (r && r.status !== 200) {
          livezFailures += 1;
          const reason = String((r.json as { reason?: string } | undefined)?.reason ?? r.status);
          livezReasons[reason] = (livezReasons[reason] ?? 0) + 1;
        }
      }
      if (i % 50 === 49) {
        const st = await countComponentStatuses(`${origin}/v3`);
        const hb = await readHeartbeat(hbFile);
        const idle = hb.ok && hb.heartbeat.counters.batches_active === 0 && hb.heartbeat.counters.batches_queued === 0;
        o.log(
          `  ${((Date.now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(st)}, ${kills} kills, faults fired ${[...fired.values()].reduce((a, b) => a + b, 0)}`,
        );
        if ((st.configured ?? 0) === o.components && idle) {
          finished = true;
          break;
        }
      }
    }
    const end = Date.now();
    const hist = (await httpJson('GET', `${origin}/__sim/sessions-history`, undefined, 60_000)).json as {
      sessions: Hist[];
      overlaps: unknown[];
    };
    const st = await countComponentStatuses(`${origin}/v3`);
    const byFault: Record<string, number> = {};
    faults.forEach((f, i) => (byFault[f.label] = fired.get(ruleIds[i]!) ?? 0));
    return {
      components: o.components,
      sessions: hist.sessions.length,
      ambiguousInjected: Object.values(byFault).reduce((a, b) => a + b, 0),
      byFault,
      spuriousLookups: fired.get(ruleIds[faults.length]!) ?? 0,
      kills,
      overlaps: hist.overlaps.length,
      notConfigured: o.components - (st.configured ?? 0),
      pendingTimeoutDeletions: hist.sessions.filter((s) => s.deleted_ms !== null).length,
      pendingPeak: pendingPeak(hist.sessions, end),
      livezFailures: sidecar ? livezFailures : null,
      livezReasons,
      seconds: (end - t0) / 1000,
      finished,
    };
  } finally {
    await batcher.stop();
    await sidecar?.stop();
    await sim.stop();
    cleanup();
  }
}
