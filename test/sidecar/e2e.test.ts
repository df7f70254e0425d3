/**
 * End to end: the real simulator, batcher and sidecar as processes. Shows /livez going 503 after the batcher is
 * stopped with SIGSTOP (a hang) and after it is killed, recovering on SIGCONT and on a new instance, and staying 200
 * through a CFS outage. Settings are shortened: freshness limit = 1 s interval + 6 s budget = 7 s (the batcher stamps
 * its wait phases every 5 s, so the budget must exceed that).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireBuilt } from '../helpers/built';

const ROOT = path.resolve(__dirname, '..', '..');
const SIM = path.join(ROOT, 'cfs-sim', 'dist', 'main.js');
const BATCHER = path.join(ROOT, 'batcher', 'dist', 'main.js');
const SIDECAR = path.join(ROOT, 'sidecar-health', 'dist', 'main.js');

const children: ChildProcess[] = [];
let dir = '';

function start(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  name: string,
): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  const keep = (buf: Buffer): void => {
    for (const l of buf.toString('utf8').split('\n')) if (l.trim() !== '' && lines.length < 5000) lines.push(l);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.on('exit', (code, signal) => lines.push(`[${name} exited code=${code} signal=${signal}]`));
  return { child, lines };
}

/** Polls `fn` until it returns a value, bounded in time. */
async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  stepMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`,
  );
}

function fromLog(lines: string[], re: RegExp): string | undefined {
  for (const l of lines) {
    const m = re.exec(l);
    if (m) return m[1];
  }
  return undefined;
}

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

requireBuilt(SIM, BATCHER, SIDECAR);

afterAll(() => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGCONT'); // resume a stopped child first so nothing is left behind in the stopped state
      c.kill('SIGKILL');
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('sidecar end to end (simulator + batcher + sidecar processes)', () => {
  let simUrl = '';
  let health = '';
  let batcher: ReturnType<typeof start>;
  let batcherEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sidecar-e2e-'));
    const scenario = path.join(dir, 'scenario.json');
    writeFileSync(
      scenario,
      JSON.stringify({
        options: { batcher_check_interval: 1, batch_window: 2 },
        operator: { pendingMs: 200, runningMs: 500 },
        configurations: [
          {
            name: 'cfg-1',
            layers: [
              { name: 'l1', clone_url: 'https://vcs.example/repo.git', commit: 'a'.repeat(40), playbook: 'site.yml' },
            ],
          },
        ],
        components: [
          { id: 'x1000c0s0b0n0', desired_config: 'cfg-1' },
          { id: 'x1000c0s0b0n1', desired_config: 'cfg-1' },
        ],
      }),
    );
    const sim = start(
      SIM,
      ['--port', '0', '--host', '127.0.0.1', '--scenario', scenario],
      { LOG_LEVEL: 'INFO' },
      'sim',
    );
    simUrl = await waitFor('the simulator to listen', () => fromLog(sim.lines, /"url":"(http:[^"]+)"/), 15_000);
    const hbPath = path.join(dir, 'heartbeat.json');
    const common = {
      CFS_API_URL: simUrl,
      HEARTBEAT_PATH: hbPath,
      OTEL_SDK_DISABLED: 'true',
    };
    const sidecar = start(
      SIDECAR,
      [],
      {
        ...common,
        HEALTH_PORT: '0',
        HEALTH_HOST: '127.0.0.1',
        SIDECAR_STARTUP_GRACE_SECONDS: '5',
        SIDECAR_FRESHNESS_SECONDS: '10',
        SIDECAR_PHASE_BUDGETS: 'starting=10,rebuild=10,options=5,check_status=5,collect=5,send=5,stopping=5',
        SIDECAR_CFS_POLL_SECONDS: '1',
      },
      'sidecar',
    );
    const port = await waitFor(
      'the sidecar to listen',
      () => fromLog(sidecar.lines, /listening on [^:]+:(\d+)/),
      15_000,
    );
    health = `http://127.0.0.1:${port}`;
    batcherEnv = {
      ...common,
      METRICS_PORT: '0',
      LOG_LEVEL: 'INFO',
      CFS_RETRY_BUDGET_MS: '1000',
      CFS_REQUEST_TIMEOUT_MS: '2000',
    };
    batcher = start(BATCHER, [], batcherEnv, 'batcher');
    await waitFor(
      '/startupz 200',
      async () => ((await get(`${health}/startupz`)).status === 200 ? true : undefined),
      30_000,
      200,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}\n--- batcher ---\n${batcher.lines.slice(-20).join('\n')}\n--- sidecar ---\n${sidecar.lines.slice(-20).join('\n')}`,
      );
    });
  }, 60_000);

  it('is live while the batcher runs', async () => {
    const r = await waitFor(
      '/livez 200',
      async () => {
        const x = await get(`${health}/livez`);
        return x.status === 200 ? x : undefined;
      },
      10_000,
    );
    expect(r.body.reason).toBe('ok');
    // the exec-probe form asks the running sidecar
    const check = spawnSync(process.execPath, [SIDECAR, 'check'], {
      env: { PATH: process.env.PATH, HEALTH_PORT: health.split(':')[2] },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(check.status).toBe(0);
    expect(JSON.parse(check.stdout.trim())).toMatchObject({ ok: true, source: 'sidecar', reason: 'ok' });
  });

  it('stays 200 through a CFS outage (shortened to 15 s, 1.5 x the freshness limit)', async () => {
    const outageMs = 15_000;
    const res = await fetch(`${simUrl.replace(/\/v3$/, '')}/__sim/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ durationMs: outageMs }),
    });
    expect(res.status).toBe(202);
    const until = Date.now() + outageMs + 3000;
    const codes = new Set<number>();
    let sawUnreachable = false;
    let sawWait = false;
    for (let i = 0; i < 500 && Date.now() < until; i++) {
      const l = await get(`${health}/livez`);
      codes.add(l.status);
      if (l.status !== 200) throw new Error(`/livez went ${l.status} during the CFS outage: ${JSON.stringify(l.body)}`);
      const s = (await get(`${health}/status`)).body as {
        cfs: { reachable: boolean | null };
        heartbeat: { phase: string | null };
      };
      if (s.cfs.reachable === false) sawUnreachable = true;
      if (s.heartbeat.phase === 'waiting_for_cfs') sawWait = true;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect([...codes]).toEqual([200]);
    expect(sawUnreachable).toBe(true);
    console.log(`CFS outage of ${outageMs} ms: /livez stayed 200; batcher reported waiting_for_cfs: ${sawWait}`);
    await waitFor(
      'CFS reachable again',
      async () => (((await get(`${health}/status`)).body.cfs as { reachable: boolean }).reachable ? true : undefined),
      15_000,
      200,
    );
  }, 60_000);

  it('goes 503 after SIGSTOP (a hang) and recovers on SIGCONT', async () => {
    await waitFor(
      '/livez 200 before the hang',
      async () => ((await get(`${health}/livez`)).status === 200 ? true : undefined),
      15_000,
    );
    const t0 = Date.now();
    batcher.child.kill('SIGSTOP');
    const r = await waitFor(
      '/livez 503 after SIGSTOP',
      async () => {
        const x = await get(`${health}/livez`);
        return x.status === 503 ? x : undefined;
      },
      20_000,
    );
    const detectMs = Date.now() - t0;
    expect(['heartbeat_stale', 'phase_stuck']).toContain(r.body.reason);
    expect(String(r.body.message)).toMatch(/no heartbeat for [\d.]+ s \(limit [\d.]+ s\)|phase \w+ began [\d.]+ s ago/);
    console.log(
      `SIGSTOP detected after ${detectMs} ms (freshness limit 10 s, verdict every 1 s): ${String(r.body.message)}`,
    );
    batcher.child.kill('SIGCONT');
    await waitFor(
      '/livez 200 after SIGCONT',
      async () => ((await get(`${health}/livez`)).status === 200 ? true : undefined),
      20_000,
    );
  }, 60_000);

  it('goes 503 after the batcher is killed; a new instance passes /startupz and counts as a restart', async () => {
    const t0 = Date.now();
    batcher.child.kill('SIGKILL');
    const r = await waitFor(
      '/livez 503 after SIGKILL',
      async () => {
        const x = await get(`${health}/livez`);
        return x.status === 503 ? x : undefined;
      },
      20_000,
    );
    console.log(`SIGKILL detected after ${Date.now() - t0} ms: ${String(r.body.message)}`);
    expect((await get(`${health}/startupz`)).status).toBe(503);
    batcher = start(BATCHER, [], batcherEnv, 'batcher-2');
    await waitFor(
      '/startupz 200 for the new instance',
      async () => ((await get(`${health}/startupz`)).status === 200 ? true : undefined),
      30_000,
      200,
    );
    await waitFor(
      '/livez 200 for the new instance',
      async () => ((await get(`${health}/livez`)).status === 200 ? true : undefined),
      10_000,
    );
    const s = await get(`${health}/status`);
    expect(s.body.restarts_seen).toBe(1);
  }, 60_000);
});
