/**
 * The one pod assembler of `npm start`, `npm run bench` and the e2e suite: the CFS simulator as a plain child (it
 * plays CFS, it is not part of the pod), then the batcher and the sidecar as containers supervised by the kubelet
 * model (container.ts on prober.ts), sharing a heartbeat folder, with the sidecar's health port mapped to a local
 * one. Callers say which programs and settings (the manifest's for `npm start` and the bench, scaled-down ones for
 * the tests); this module owns the order of start and stop.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SupervisedContainer } from './container';
import { freePort } from './net';
import { Proc } from './proc';
import type { ContainerProbes } from './probe-spec';

/** The port the sidecar's health endpoints use in the manifest (probes name it); mapped to a free local one. */
export const MANIFEST_HEALTH_PORT = 8081;

export interface PodEvent {
  at: number;
  container: string;
  message: string;
}

/** What the simulator's start line told: where CFS is, and the control port when the scenario asked for one. */
export interface SimEndpoints {
  /** The CFS API the programs use (faults, outages and stats apply), ending in /v3. */
  cfsUrl: string;
  /** Origin of the CFS port. */
  cfsOrigin: string;
  /** Origin of the control port (never faulted or counted), or the CFS origin when there is none. */
  controlOrigin: string;
}

export interface ContainerLaunch {
  name: string;
  /** node arguments: options, then the script. */
  nodeArgs: string[];
  /** A command that execs node with the same pid, e.g. the container limits' cgroup entry (pod-limits.ts). */
  prefix?: string[];
  env: Record<string, string>;
  probes: ContainerProbes;
}

export interface PodOptions {
  name: string;
  scenarioFile: string;
  /** 0 (default): the simulator picks one and says it. */
  simPort?: number;
  simEnv?: Record<string, string>;
  /** Where the simulator's and the containers' logs go. */
  logDir: string;
  heartbeatPath: string;
  /** Local port for the manifest's health port; 0 or unset: a free one. */
  healthPort?: number;
  /** More manifest ports to map (e.g. the batcher's metrics port). */
  ports?: Record<number, number>;
  /** The containers, once CFS's address is known (the sidecar first: it judges the batcher's start-up). */
  containers: (sim: SimEndpoints, healthPort: number) => ContainerLaunch[];
  onMessage?: (container: string, message: string) => void;
  /** Called once CFS's address is known, before the containers start (wait for CFS, set options). */
  ready?: (sim: SimEndpoints) => Promise<void>;
  /** How often the kubelet model's clock ticks. */
  tickMs?: number;
  /** Deadline for the simulator's start line. */
  simStartMs?: number;
}

export class LocalPod {
  readonly events: PodEvent[] = [];
  readonly containers = new Map<string, SupervisedContainer>();
  sim!: Proc;
  endpoints!: SimEndpoints;
  healthPort = 0;
  private ticker: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(readonly opts: PodOptions) {}

  get simLogFile(): string {
    return path.join(this.opts.logDir, 'cfs-sim.log');
  }

  logFileOf(container: string): string {
    return path.join(this.opts.logDir, `${container}.log`);
  }

  container(name: string): SupervisedContainer {
    const c = this.containers.get(name);
    if (!c) throw new Error(`no container ${name} in pod ${this.opts.name}`);
    return c;
  }

  /** Starts the simulator, waits for its start line, then starts the containers. */
  async start(): Promise<void> {
    const o = this.opts;
    mkdirSync(o.logDir, { recursive: true });
    mkdirSync(path.dirname(o.heartbeatPath), { recursive: true });
    this.sim = new Proc({
      name: `${o.name}-sim`,
      script: 'cfs-sim/dist/main.js',
      args: ['--port', String(o.simPort ?? 0), '--scenario', o.scenarioFile],
      env: { LOG_LEVEL: 'INFO', ...o.simEnv },
      logFile: this.simLogFile,
    });
    this.endpoints = o.simPort ? endpoints(o.simPort, undefined) : await this.simAnnounced(o.simStartMs ?? 30_000);
    await o.ready?.(this.endpoints);
    if (this.closing) return; // stopped while starting (Ctrl-C): no container is left behind
    this.healthPort = o.healthPort || (await freePort());
    const ports: Record<number, number> = { [MANIFEST_HEALTH_PORT]: this.healthPort, ...o.ports };
    const onMessage = (container: string, message: string): void => {
      this.events.push({ at: Date.now(), container, message });
      o.onMessage?.(container, message);
    };
    for (const c of o.containers(this.endpoints, this.healthPort)) {
      const [command, ...prefixArgs] = [...(c.prefix ?? []), process.execPath];
      const sc = new SupervisedContainer({
        name: c.name,
        command: command,
        args: [...prefixArgs, ...c.nodeArgs],
        cwd: path.resolve(__dirname, '..', '..'),
        env: c.env,
        probes: c.probes,
        mapPort: (p) => ports[p] ?? p,
        logFile: this.logFileOf(c.name),
        onMessage,
      });
      this.containers.set(c.name, sc);
    }
    this.ticker = setInterval(() => this.tick(), o.tickMs ?? 100);
    this.tick();
  }

  /** The simulator's start line names its ports (asked for port 0). */
  private async simAnnounced(timeoutMs: number): Promise<SimEndpoints> {
    const gone = () => (this.sim.alive ? null : `the simulator exited (${JSON.stringify(this.sim.exit)})`);
    const line = await this.sim
      .waitForLine((l) => typeof l.json?.port === 'number', timeoutMs, 0, gone)
      .catch((err: Error) => {
        throw new Error(`${err.message}\n${this.sim.tail()}`);
      });
    const ctl = line.json?.control_port;
    return endpoints(Number(line.json?.port), typeof ctl === 'number' ? ctl : undefined);
  }

  private tick(): void {
    for (const c of this.containers.values()) c.tick();
  }

  eventsFor(container: string, match: RegExp, since = 0): PodEvent[] {
    return this.events.filter((e) => e.container === container && e.at >= since && match.test(e.message));
  }

  /**
   * SIGTERM to every container at once, like a pod deletion (the kubelet model keeps ticking and SIGKILLs after
   * each grace period), then the simulator. Whatever still runs after `budgetMs` is SIGKILLed: nothing outlives it.
   */
  async close(budgetMs = 8000): Promise<void> {
    this.closing = true;
    if (this.ticker === null && this.containers.size > 0) this.ticker = setInterval(() => this.tick(), 100);
    const all = Promise.all([...[...this.containers.values()].map((c) => c.stop()), this.sim?.stop(budgetMs)]);
    const budget = setTimeout(() => {
      for (const c of this.containers.values()) killHard(c.pid);
      if (this.sim?.alive) this.sim.signal('SIGKILL');
    }, budgetMs);
    try {
      await all;
    } finally {
      clearTimeout(budget);
      if (this.ticker) clearInterval(this.ticker);
      this.ticker = null;
      for (const c of this.containers.values()) c.closeLog();
    }
  }
}

function endpoints(port: number, controlPort: number | undefined): SimEndpoints {
  const cfsOrigin = `http://127.0.0.1:${port}`;
  const controlOrigin = controlPort === undefined ? cfsOrigin : `http://127.0.0.1:${controlPort}`;
  return { cfsUrl: `${cfsOrigin}/v3`, cfsOrigin, controlOrigin };
}

/** SIGKILL by pid, ignoring a process that is already gone. */
function killHard(pid: number | null | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}
