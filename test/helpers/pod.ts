/**
 * The e2e suite's pod: the shared assembler (scripts/src/pod.ts) with every timing scaled down and the batcher
 * run through the fault fixture (containers in pod-containers.ts), plus what tests ask of it: the simulator's
 * control port (never faulted, counted or closed) for reads, writes, faults and member snapshots.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readHeartbeat } from '@cfs-batcher/shared';
import type { SupervisedContainer } from '../../scripts/src/container';
import { LocalPod, type PodEvent } from '../../scripts/src/pod';
import type { Proc } from '../../scripts/src/proc';
import { request } from './http';
import { readLogLines, type LogLine } from './log-lines';
import { podContainers, type PodConfig } from './pod-containers';
import { SimControl } from './sim-control';
import { killAll } from './proc';
import { makeTempDir } from './tmp';
import { waitFor } from './wait';

export * from './pod-settings';

export type { PodEvent } from '../../scripts/src/pod';
export type { PodConfig } from './pod-containers';

/** The faults the fixture knows (scripts/src/fixtures/faulty-batcher.ts). */
export type BatcherFault =
  'busy-loop' | 'never-send' | 'throw' | 'reject' | 'oom' | 'heartbeat-eacces' | 'heartbeat-enospc';

/** Pods not yet closed: `closePodsAfter` closes them, even after a failed test. */
const openPods = new Set<Pod>();

/**
 * Registers the suite's clean-up: every pod still open is closed after each test ('each') or after the file
 * ('all'), then any child process left is killed. One line instead of the same hooks in every e2e file.
 */
export function closePodsAfter(when: 'each' | 'all'): void {
  const closeOpen = async (): Promise<void> => {
    for (const pod of [...openPods]) await pod.close();
  };
  if (when === 'each') afterEach(closeOpen);
  afterAll(async () => {
    await closeOpen();
    await killAll();
  });
}

export class Pod extends SimControl {
  readonly tmp = makeTempDir('pod');
  readonly heartbeatPath = path.join(this.tmp.dir, 'hb', 'heartbeat.json');
  readonly faultFile = path.join(this.tmp.dir, 'test-fault');
  private readonly pod: LocalPod;

  constructor(readonly cfg: PodConfig) {
    super(() => this.simOrigin);
    openPods.add(this);
    const scenarioFile = path.join(this.tmp.dir, 'scenario.json');
    const server = { controlPort: 0, ...(cfg.scenario.server as Record<string, unknown> | undefined) };
    writeFileSync(scenarioFile, JSON.stringify({ ...cfg.scenario, server }));
    this.pod = new LocalPod({
      name: cfg.name,
      scenarioFile,
      logDir: this.tmp.dir,
      heartbeatPath: this.heartbeatPath,
      containers: podContainers(cfg, { heartbeatPath: this.heartbeatPath, faultFile: this.faultFile }),
    });
  }

  async start(): Promise<void> {
    await this.pod.start();
  }

  get events(): PodEvent[] {
    return this.pod.events;
  }
  get sim(): Proc {
    return this.pod.sim;
  }
  /** The simulator's control port: the test's own reads, writes and /__sim calls (never faulted or counted). */
  get simOrigin(): string {
    return this.pod.endpoints.controlOrigin;
  }
  /** The CFS API the batcher and the sidecar use (faults, outages and stats apply). */
  get cfsUrl(): string {
    return this.pod.endpoints.cfsUrl;
  }
  get batcher(): SupervisedContainer {
    return this.pod.container('cfs-batcher');
  }
  get sidecar(): SupervisedContainer | null {
    return this.cfg.noSidecar ? null : this.pod.container('health-sidecar');
  }
  get healthPort(): number {
    return this.pod.healthPort;
  }
  get batcherLogFile(): string {
    return this.pod.logFileOf('cfs-batcher');
  }
  get sidecarLogFile(): string {
    return this.pod.logFileOf('health-sidecar');
  }
  get healthUrl(): string {
    return `http://127.0.0.1:${this.healthPort}`;
  }

  /** Restarts the batcher container has had (kubelet count). */
  get batcherRestarts(): number {
    return this.batcher.snapshot.restarts;
  }

  eventsFor(container: string, match: RegExp, since = 0): PodEvent[] {
    return this.pod.eventsFor(container, match, since);
  }

  /** Lines of the batcher's log (all instances), parsed where JSON. */
  logLines(file = this.batcherLogFile): LogLine[] {
    return readLogLines(file);
  }

  /** Waits until the batcher is running with the startup gate passed (the sidecar saw this instance's heartbeat). */
  async waitBatcherStarted(timeoutMs = 30_000): Promise<void> {
    await waitFor(
      () => this.batcher.snapshot.phase === 'running' && (this.cfg.noSidecar || this.batcher.snapshot.startupPassed),
      {
        timeoutMs,
        what: 'the batcher to pass its startup probe',
      },
    );
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
        return (
          r.ok &&
          r.heartbeat.counters.batches_active === 0 &&
          r.heartbeat.counters.batches_queued === 0 &&
          r.heartbeat.phase === 'sleep'
        );
      },
      { timeoutMs, intervalMs: 100, what: 'the batcher to hold no batch' },
    );
  }

  async livez(): Promise<{ status: number; reason?: string; message?: string }> {
    const r = await request(`${this.healthUrl}/livez`, { timeoutMs: 2000 });
    const j = 'json' in r ? (r.json as { reason?: string; message?: string } | undefined) : undefined;
    return { status: r.status, reason: j?.reason, message: j?.message };
  }

  /** Arms a test fault in the running batcher (scripts/src/fixtures/faulty-batcher.ts reads it at its next cycle). */
  injectFault(fault: BatcherFault): void {
    writeFileSync(this.faultFile, fault);
  }

  clearFault(): void {
    rmSync(this.faultFile, { force: true });
  }

  async close(): Promise<void> {
    openPods.delete(this);
    await this.pod.close(8000);
    this.tmp.cleanup();
  }

  /** Pid of the running batcher process (for SIGSTOP and friends). */
  batcherPid(): number {
    const pid = this.batcher.pid;
    if (pid === null) throw new Error('the batcher is not running');
    return pid;
  }
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
