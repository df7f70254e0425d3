/**
 * A local pod for the e2e suite: the simulator, the batcher and the sidecar as real processes, the two programs
 * each supervised by the local pod's kubelet model (scripts/src/container.ts on the pure scripts/src/prober.ts),
 * with every timing scaled down. The programs talk to the simulator's CFS port (faults, outages, stats apply);
 * the test talks to its control port (never faulted, counted or closed), and reads member snapshots and session
 * intervals from the simulator's own history.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readHeartbeat } from '@cfs-batcher/shared';
import type { HistoryEntry as SimHistoryEntry } from '@cfs-batcher/cfs-sim';
import { SupervisedContainer } from '../../scripts/src/container';
import { BATCHER_CONTAINER, SIDECAR_CONTAINER, loadPodSpec } from '../../scripts/src/pod-spec';
import type { ContainerProbes, ProbeSpec } from '../../scripts/src/prober';
import { getJson, request, sendJson } from './http';
import { assertInvariants, type SessionRecord } from './invariants';
import { freePort } from './ports';
import { REPO_ROOT, spawnNode, type Proc } from './proc';
import { makeTempDir } from './tmp';
import { waitFor } from './wait';

/**
 * The manifest's own probe settings (issue 14: the suite runs the shipped values, not scaled ones), read from the
 * rendered manifest as the local pod does. Only the pod's drain grace is shortened, to keep teardown quick.
 * (The FAST_ names stay for the files that import them.)
 */
const SHIPPED = loadPodSpec(REPO_ROOT);
export const FAST_LIVENESS: ProbeSpec = SHIPPED.containers[BATCHER_CONTAINER]!.probes.liveness!;

export const FAST_BATCHER_PROBES: ContainerProbes = { ...SHIPPED.containers[BATCHER_CONTAINER]!.probes, podTerminationGracePeriodSeconds: 3 };

export const FAST_SIDECAR_PROBES: ContainerProbes = { ...SHIPPED.containers[SIDECAR_CONTAINER]!.probes, podTerminationGracePeriodSeconds: 3 };

/** Sidecar thresholds for the suite (seconds): the shipped 10 s freshness, a new instance gets 10 s. */
export const FAST_SIDECAR_ENV: Record<string, string> = {
  SIDECAR_STARTUP_GRACE_SECONDS: '10',
  SIDECAR_FRESHNESS_SECONDS: SHIPPED.containers[SIDECAR_CONTAINER]!.env.find((e) => e.name === 'SIDECAR_FRESHNESS_SECONDS')?.value ?? '10',
  SIDECAR_PHASE_BUDGETS: 'starting=10,rebuild=10,options=10,check_status=10,collect=10,send=10,stopping=10',
  SIDECAR_PROGRESS_DEADLINE_SECONDS: '12',
  SIDECAR_CFS_POLL_SECONDS: '1',
  SIDECAR_CFS_TIMEOUT_MS: '1000',
  SIDECAR_EVAL_INTERVAL_MS: '250',
  CFS_RETRY_BUDGET_MS: '0',
};

export const FAST_BATCHER_ENV: Record<string, string> = {
  CFS_CONNECT_TIMEOUT_MS: '1000',
  CFS_REQUEST_TIMEOUT_MS: '2000',
  CFS_RETRY_BUDGET_MS: '2000',
  METRICS_PORT: '0',
};

export interface PodEvent {
  at: number;
  container: string;
  message: string;
}

export interface PodConfig {
  name: string;
  scenario: Record<string, unknown>;
  batcherEnv?: Record<string, string>;
  sidecarEnv?: Record<string, string>;
  batcherProbes?: ContainerProbes;
  sidecarProbes?: ContainerProbes;
  nodeArgs?: string[];
  /** Start without the sidecar (the batcher then has no probes). */
  noSidecar?: boolean;
}

export class Pod {
  readonly tmp = makeTempDir('pod');
  readonly events: PodEvent[] = [];
  sim!: Proc;
  /** The simulator's control port: the test's own reads, writes and /__sim calls (never faulted or counted). */
  simOrigin = '';
  /** The CFS API the batcher and the sidecar use (faults, outages and stats apply). */
  cfsUrl = '';
  batcher!: SupervisedContainer;
  sidecar: SupervisedContainer | null = null;
  healthPort = 0;
  readonly heartbeatPath = path.join(this.tmp.dir, 'hb', 'heartbeat.json');
  readonly faultFile = path.join(this.tmp.dir, 'test-fault');
  private ticker: NodeJS.Timeout | null = null;

  constructor(readonly cfg: PodConfig) {}

  get batcherLogFile(): string {
    return path.join(this.tmp.dir, 'batcher.log');
  }
  get sidecarLogFile(): string {
    return path.join(this.tmp.dir, 'sidecar.log');
  }
  get healthUrl(): string {
    return `http://127.0.0.1:${this.healthPort}`;
  }

  async start(): Promise<void> {
    const scenarioFile = path.join(this.tmp.dir, 'scenario.json');
    const server = { controlPort: 0, ...(this.cfg.scenario.server as Record<string, unknown> | undefined) };
    writeFileSync(scenarioFile, JSON.stringify({ ...this.cfg.scenario, server }));
    mkdirSync(path.dirname(this.heartbeatPath), { recursive: true });
    this.sim = spawnNode({ name: `${this.cfg.name}-sim`, script: 'cfs-sim/dist/main.js', args: ['--port', '0', '--scenario', scenarioFile], env: { LOG_LEVEL: 'INFO' } });
    const ready = await this.sim.waitForLine((l) => typeof l.json?.port === 'number' && typeof l.json?.control_port === 'number', 15_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${this.sim.tail()}`);
    });
    this.cfsUrl = `http://127.0.0.1:${Number(ready.json?.port)}/v3`;
    this.simOrigin = `http://127.0.0.1:${Number(ready.json?.control_port)}`;
    this.healthPort = await freePort();
    const mapPort = (p: number): number => (p === 8081 ? this.healthPort : p);
    const onMessage = (container: string, message: string): void => {
      this.events.push({ at: Date.now(), container, message });
    };
    const common = { OTEL_SDK_DISABLED: 'true', NODE_ENV: 'test', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
    this.batcher = new SupervisedContainer({
      name: 'cfs-batcher',
      command: process.execPath,
      // The production start() with the e2e faults around its phases; inert until the fault file names one.
      args: [...(this.cfg.nodeArgs ?? []), path.join(REPO_ROOT, 'scripts/dist/fixtures/faulty-batcher.js')],
      cwd: REPO_ROOT,
      env: {
        ...common,
        ...FAST_BATCHER_ENV,
        CFS_API_URL: this.cfsUrl,
        HEARTBEAT_PATH: this.heartbeatPath,
        BATCHER_TEST_FAULT_FILE: this.faultFile,
        ...this.cfg.batcherEnv,
      },
      probes: this.cfg.noSidecar ? { podTerminationGracePeriodSeconds: 3 } : (this.cfg.batcherProbes ?? FAST_BATCHER_PROBES),
      mapPort,
      logFile: this.batcherLogFile,
      onMessage,
    });
    if (!this.cfg.noSidecar) {
      this.sidecar = new SupervisedContainer({
        name: 'health-sidecar',
        command: process.execPath,
        args: [path.join(REPO_ROOT, 'sidecar-health/dist/main.js')],
        cwd: REPO_ROOT,
        env: {
          ...common,
          ...FAST_SIDECAR_ENV,
          HEALTH_PORT: String(this.healthPort),
          HEALTH_HOST: '127.0.0.1',
          HEARTBEAT_PATH: this.heartbeatPath,
          CFS_API_URL: this.cfsUrl,
          ...this.cfg.sidecarEnv,
        },
        probes: this.cfg.sidecarProbes ?? FAST_SIDECAR_PROBES,
        mapPort,
        logFile: this.sidecarLogFile,
        onMessage,
      });
    }
    this.ticker = setInterval(() => {
      this.sidecar?.tick();
      this.batcher.tick();
    }, 100);
    this.batcher.tick();
    this.sidecar?.tick();
  }

  /** Restarts the batcher container has had (kubelet count). */
  get batcherRestarts(): number {
    return this.batcher.snapshot.restarts;
  }

  eventsFor(container: string, match: RegExp, since = 0): PodEvent[] {
    return this.events.filter((e) => e.container === container && e.at >= since && match.test(e.message));
  }

  /** Lines of the batcher's log (all instances), parsed where JSON. */
  logLines(file = this.batcherLogFile): Array<{ text: string; json?: Record<string, unknown> }> {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').filter((l) => l !== '').map((l) => {
      try {
        return { text: l, json: l.startsWith('{') ? (JSON.parse(l) as Record<string, unknown>) : undefined };
      } catch {
        return { text: l };
      }
    });
  }

  /** Waits until the batcher is running with the startup gate passed (the sidecar saw this instance's heartbeat). */
  async waitBatcherStarted(timeoutMs = 30_000): Promise<void> {
    await waitFor(() => this.batcher.snapshot.phase === 'running' && (this.cfg.noSidecar || this.batcher.snapshot.startupPassed), {
      timeoutMs,
      what: 'the batcher to pass its startup probe',
    });
  }

  /**
   * Waits until a batcher process other than `oldPid` has completed a cycle (its own heartbeat, cycle >= 1).
   * The sidecar's startup gate can open on the previous instance's still-fresh file, so this is the real "recovered".
   */
  async waitNewInstanceCycling(oldPid: number, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        const r = await readHeartbeat(this.heartbeatPath);
        return r.ok && r.heartbeat.pid !== oldPid && r.heartbeat.pid === this.batcher.pid && r.heartbeat.cycle >= 1;
      },
      { timeoutMs, intervalMs: 100, what: 'a new batcher instance completing a cycle' },
    );
  }

  /** Waits until the batcher holds no batch (every session it created has been seen to finish). */
  async waitBatcherIdle(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const r = await readHeartbeat(this.heartbeatPath);
        return r.ok && r.heartbeat.counters.batches_active === 0 && r.heartbeat.counters.batches_queued === 0 && r.heartbeat.phase === 'sleep';
      },
      { timeoutMs, intervalMs: 100, what: 'the batcher to hold no batch' },
    );
  }

  async livez(): Promise<{ status: number; reason?: string; message?: string }> {
    const r = await request(`${this.healthUrl}/livez`, { timeoutMs: 2000 });
    const j = 'json' in r ? (r.json as { reason?: string; message?: string } | undefined) : undefined;
    return { status: r.status, reason: j?.reason, message: j?.message };
  }

  async sessions(): Promise<SessionRecord[]> {
    const h = await getJson<{ sessions: SimHistoryEntry[] }>(`${this.simOrigin}/__sim/sessions-history`);
    return h.sessions.map((s) => ({
      name: s.name,
      configuration: s.configuration,
      configuration_limit: s.configuration_limit,
      hosts: s.hosts,
      tags: s.tags ?? {},
      created_ms: s.created_ms,
      completed_ms: s.completed_ms,
      deleted_ms: s.deleted_ms,
      members: s.members,
    }));
  }

  async assertInvariants(maxBatchSize: number): Promise<number> {
    return assertInvariants(await this.sessions(), { maxBatchSize, requireMembers: true });
  }

  async componentStatuses(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const body = await getJson<{ components: Array<{ id: string; configuration_status?: string }> }>(`${this.simOrigin}/v3/components?limit=10000`);
    for (const c of body.components) out[c.id] = c.configuration_status ?? '';
    return out;
  }

  async addFault(rule: Record<string, unknown> | Record<string, unknown>[]): Promise<void> {
    await sendJson('POST', `${this.simOrigin}/__sim/faults`, rule);
  }

  async clearFaults(): Promise<void> {
    await request(`${this.simOrigin}/__sim/faults`, { method: 'DELETE' });
  }

  async operator(cmd: Record<string, unknown>): Promise<unknown> {
    return sendJson('POST', `${this.simOrigin}/__sim/operator`, cmd);
  }

  async patchOptions(patch: Record<string, unknown>): Promise<void> {
    await sendJson('PATCH', `${this.simOrigin}/v3/options`, patch);
  }

  async stats(): Promise<{ total: number; byRoute: Record<string, number>; byRouteStatus: Record<string, number> }> {
    return getJson(`${this.simOrigin}/__sim/stats`);
  }

  /** POST /v3/sessions requests the programs sent (answered or not). */
  async sessionPosts(): Promise<number> {
    return (await this.stats()).byRoute['POST /v3/sessions'] ?? 0;
  }

  /** Closes the CFS port for durationMs (connection refused); the simulator reopens it by itself. */
  async outage(durationMs: number): Promise<void> {
    await sendJson('POST', `${this.simOrigin}/__sim/outage`, { durationMs });
  }

  /** Arms a test fault in the running batcher (scripts/src/fixtures/faulty-batcher.ts reads it at its next cycle). */
  injectFault(fault: 'busy-loop' | 'never-send' | 'throw' | 'reject' | 'oom'): void {
    writeFileSync(this.faultFile, fault);
  }

  clearFault(): void {
    rmSync(this.faultFile, { force: true });
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    const stops: Promise<void>[] = [];
    // stop() resolves when the kubelet model sees the exit; it needs ticks to send its SIGKILL.
    const t = setInterval(() => {
      this.batcher?.tick();
      this.sidecar?.tick();
    }, 100);
    try {
      if (this.batcher) stops.push(this.batcher.stop());
      if (this.sidecar) stops.push(this.sidecar.stop());
      let cap: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(stops), new Promise((r) => (cap = setTimeout(r, 8000)))]);
      clearTimeout(cap);
    } finally {
      clearInterval(t);
      this.batcher?.closeLog();
      this.sidecar?.closeLog();
    }
    await this.sim?.stop(3000).catch(() => undefined);
    this.tmp.cleanup();
  }

  /** Pid of the running batcher process (for SIGSTOP and friends). */
  batcherPid(): number {
    const pid = this.batcher.pid;
    if (pid === null) throw new Error('the batcher is not running');
    return pid;
  }
}

/** A small inventory: `n` components over `configs` configurations of two layers, every one pending. */
export function smallScenario(n: number, o: { configs?: number; batchSize?: number; checkInterval?: number; batchWindow?: number; pendingMs?: number; runningMs?: number; extra?: Record<string, unknown> } = {}): Record<string, unknown> {
  const configs = o.configs ?? 2;
  const configurations = Array.from({ length: configs }, (_, i) => ({
    name: `cfg-${i}`,
    layers: [
      { name: 'base', clone_url: `https://vcs.local/vcs/cray/base-${i}.git`, commit: `a${i}`.padEnd(40, '0'), playbook: 'site.yml' },
      { name: 'extra', clone_url: `https://vcs.local/vcs/cray/extra-${i}.git`, commit: `b${i}`.padEnd(40, '0'), playbook: 'extra.yml' },
    ],
  }));
  const components = Array.from({ length: n }, (_, i) => ({
    id: `x3000c0s${i}b0n0`,
    desired_config: `cfg-${i % configs}`,
    enabled: true,
    error_count: 0,
    tags: i % 3 === 0 ? { role: 'compute', rack: String(i % 2) } : { role: 'compute' },
  }));
  return {
    options: {
      batcher_check_interval: o.checkInterval ?? 1,
      batch_window: o.batchWindow ?? 1,
      batch_size: o.batchSize ?? 5,
      batcher_pending_timeout: 300,
    },
    operator: { pendingMs: o.pendingMs ?? 200, runningMs: o.runningMs ?? 600 },
    configurations,
    components,
    ...o.extra,
  };
}

/** Waits until every component is configured; returns the seconds it took. */
export async function waitAllConfigured(pod: Pod, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  await waitFor(
    async () => {
      const st = await pod.componentStatuses();
      return Object.values(st).every((s) => s === 'configured');
    },
    { timeoutMs, intervalMs: 250, what: 'every component configured' },
  );
  return (Date.now() - t0) / 1000;
}
