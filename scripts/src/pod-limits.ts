/**
 * A container's resource limits for one measured process, as the kubelet sets them: a cgroup of its own with a CFS
 * bandwidth quota of `cpus` x 100 ms in every 100 ms period (`limits.cpu`) and a memory limit (`limits.memory`),
 * past which the kernel's OOM killer ends the process. cgroup v2 (`cpu.max`, `memory.max`, `memory.events`) or v1
 * (the cpu and memory hierarchies). Under a quota the kernel stops every thread of the process for the rest of the
 * period once the budget is spent, which two cores shared by time never show.
 *
 * The process enters the cgroup before node starts (`prefix()`): node sizes its default heap from the memory limit
 * it finds at start-up, as in a container. Needs write access to the cgroup hierarchy (root on a machine or a
 * privileged container); the error says so otherwise.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
let made = 0;
const PERIOD_US = 100_000;

export interface Limits {
  /** CPUs (the manifest's `limits.cpu`); no quota when absent. */
  cpus?: number;
  /** Bytes (the manifest's `limits.memory`); no limit when absent. */
  memoryBytes?: number;
}

export interface Throttling {
  /** Periods in which the process ran, and those in which it spent its budget and was stopped. */
  periods: number;
  throttledPeriods: number;
  throttledMs: number;
}

export interface MemoryFigures {
  limitBytes: number;
  /** The cgroup's highest charge (RSS and the page cache it caused); null where the kernel keeps no such figure. */
  peakBytes: number | null;
  /** Processes the OOM killer ended inside the cgroup. */
  oomKills: number;
}

/** Pure: `key value` lines (cpu.stat, memory.events, memory.oom_control) -> numbers by key. */
export function keyValues(text: string): Record<string, number> {
  return Object.fromEntries(
    text
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((p) => p.length === 2)
      .map(([k, v]) => [k as string, Number(v)]),
  );
}

/** Enters every cgroup.procs file named before `--` with the shell's own pid, then execs the rest (same pid). */
const ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"';

export class PodLimits {
  private constructor(
    private readonly v2: boolean,
    /** The cgroup directory per controller (one directory on v2). */
    private readonly dirs: { cpu?: string; memory?: string },
    readonly limits: Limits,
  ) {}

  /** Fresh cgroup(s) with the limits; throws naming what is missing when the hierarchy cannot be written. */
  static create(limits: Limits, name = `cfsb-limits-${process.pid}-${++made}`): PodLimits {
    const { cpus, memoryBytes } = limits;
    if (cpus !== undefined && !(cpus > 0 && cpus <= 64))
      throw new Error(`a CPU limit must be in (0, 64] CPUs, not ${cpus}`);
    if (memoryBytes !== undefined && !(memoryBytes >= 2 ** 20))
      throw new Error(`a memory limit must be at least 1 MiB, not ${memoryBytes} bytes`);
    const quotaUs = cpus !== undefined ? String(Math.round(cpus * PERIOD_US)) : undefined;
    const made: string[] = [];
    const mk = (dir: string): string => {
      mkdirSync(dir);
      made.push(dir);
      return dir;
    };
    try {
      if (existsSync(path.join(ROOT, 'cgroup.controllers'))) {
        const dir = mk(path.join(ROOT, name));
        if (quotaUs) writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
        if (memoryBytes !== undefined) {
          writeFileSync(path.join(dir, 'memory.max'), String(memoryBytes));
          // As a node without swap: the limit is the limit.
          if (existsSync(path.join(dir, 'memory.swap.max'))) writeFileSync(path.join(dir, 'memory.swap.max'), '0');
        }
        return new PodLimits(true, { cpu: dir, memory: dir }, limits);
      }
      const dirs: { cpu?: string; memory?: string } = {};
      if (quotaUs) {
        dirs.cpu = mk(path.join(ROOT, 'cpu', name));
        writeFileSync(path.join(dirs.cpu, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(path.join(dirs.cpu, 'cpu.cfs_quota_us'), quotaUs);
      }
      if (memoryBytes !== undefined) {
        dirs.memory = mk(path.join(ROOT, 'memory', name));
        writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), String(memoryBytes));
      }
      return new PodLimits(false, dirs, limits);
    } catch (err) {
      for (const d of made.reverse()) rmdirSync(d);
      throw new Error(
        `cannot set a container's limits (${(err as Error).message}): needs a writable cgroup hierarchy ` +
          `at ${ROOT} (v2 with the cpu and memory controllers, or v1 cpu and memory), i.e. root`,
        { cause: err },
      );
    }
  }

  private procsFiles(): string[] {
    return [...new Set(Object.values(this.dirs))].map((d) => path.join(d, 'cgroup.procs'));
  }

  /** A command prefix that runs the command inside the cgroup(s) from its first instruction (it execs: same pid). */
  prefix(): string[] {
    return ['/bin/sh', '-c', ENTER, 'sh', ...this.procsFiles(), '--'];
  }

  /** Moves a running process, all its threads, inside (its heap was already sized: prefer `prefix()`). */
  add(pid: number): void {
    for (const f of this.procsFiles()) writeFileSync(f, String(pid));
  }

  throttling(): Throttling | null {
    if (!this.dirs.cpu) return null;
    const stat = keyValues(readFileSync(path.join(this.dirs.cpu, 'cpu.stat'), 'utf8'));
    // v2 reports microseconds, v1 nanoseconds.
    const throttledMs =
      stat.throttled_usec !== undefined ? stat.throttled_usec / 1000 : (stat.throttled_time ?? 0) / 1e6;
    return { periods: stat.nr_periods ?? 0, throttledPeriods: stat.nr_throttled ?? 0, throttledMs };
  }

  memory(): MemoryFigures | null {
    const dir = this.dirs.memory;
    if (!dir || this.limits.memoryBytes === undefined) return null;
    const read = (f: string): string | null => {
      try {
        return readFileSync(path.join(dir, f), 'utf8');
      } catch {
        return null;
      }
    };
    const peak = this.v2 ? read('memory.peak') : read('memory.max_usage_in_bytes');
    const events = keyValues((this.v2 ? read('memory.events') : read('memory.oom_control')) ?? '');
    return {
      limitBytes: this.limits.memoryBytes,
      peakBytes: peak !== null ? Number(peak.trim()) : null,
      oomKills: events.oom_kill ?? 0,
    };
  }

  /** Moves any process still inside back to the root and removes the cgroup(s). */
  remove(): void {
    for (const dir of new Set(Object.values(this.dirs))) {
      if (!existsSync(dir)) continue;
      const parent = path.join(path.dirname(dir), 'cgroup.procs');
      for (const pid of readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try {
          writeFileSync(parent, pid);
        } catch {
          // exited meanwhile
        }
      }
      rmdirSync(dir);
    }
  }
}

/** ", OOM-killed inside its memory limit" when the kernel says so. */
export function oomNote(cgroup: PodLimits | null | undefined): string {
  const kills = cgroup?.memory()?.oomKills ?? 0;
  return kills > 0 ? `, OOM-killed inside its ${cgroup!.limits.memoryBytes! / 2 ** 20} MiB memory limit` : '';
}
