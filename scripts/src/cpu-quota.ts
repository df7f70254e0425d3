/**
 * A CPU limit for one measured process, as the kubelet sets a container's `limits.cpu`: a CFS bandwidth quota of
 * `cpus` x 100 ms in every 100 ms period, in a cgroup of its own (v2 `cpu.max`, or v1 `cpu.cfs_quota_us`). Two
 * cores shared by time (stress-ng beside a pinned process) are not the same thing: under a quota the kernel stops
 * every thread of the process for the rest of the period once the budget is spent, so a request can wait up to
 * `(1 - cpus) x 100 ms` however short the work in front of it. Needs write access to the cgroup hierarchy (root on
 * a machine or a privileged container); the error says so otherwise.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
const PERIOD_US = 100_000;

export interface Throttling {
  /** Periods in which the process ran, and those in which it spent its budget and was stopped. */
  periods: number;
  throttledPeriods: number;
  throttledMs: number;
}

export class CpuQuota {
  private constructor(
    private readonly dir: string,
    private readonly parentProcs: string,
    readonly cpus: number,
  ) {}

  /** A fresh cgroup with the quota; throws naming what is missing when the hierarchy cannot be written. */
  static create(cpus: number, name = `cfsb-bench-${process.pid}`): CpuQuota {
    if (!(cpus > 0 && cpus <= 64)) throw new Error(`a CPU quota must be in (0, 64] CPUs, not ${cpus}`);
    const quotaUs = String(Math.round(cpus * PERIOD_US));
    try {
      if (existsSync(path.join(ROOT, 'cgroup.controllers'))) {
        const dir = path.join(ROOT, name);
        mkdirSync(dir);
        writeFileSync(path.join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
        return new CpuQuota(dir, path.join(ROOT, 'cgroup.procs'), cpus);
      }
      const dir = path.join(ROOT, 'cpu', name);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), quotaUs);
      return new CpuQuota(dir, path.join(ROOT, 'cpu', 'cgroup.procs'), cpus);
    } catch (err) {
      throw new Error(
        `cannot give the batcher a CPU quota (${(err as Error).message}): needs a writable cgroup hierarchy at ${ROOT} ` +
          '(v2 with the cpu controller, or v1 cpu), i.e. root',
        { cause: err },
      );
    }
  }

  /** Moves a process, all its threads, under the quota. */
  add(pid: number): void {
    writeFileSync(path.join(this.dir, 'cgroup.procs'), String(pid));
  }

  throttling(): Throttling {
    const stat = Object.fromEntries(
      readFileSync(path.join(this.dir, 'cpu.stat'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ') as [string, string])
        .map(([k, v]) => [k, Number(v)]),
    );
    // v2 reports microseconds, v1 nanoseconds.
    const throttledMs =
      stat.throttled_usec !== undefined ? stat.throttled_usec / 1000 : (stat.throttled_time ?? 0) / 1e6;
    return { periods: stat.nr_periods ?? 0, throttledPeriods: stat.nr_throttled ?? 0, throttledMs };
  }

  /** Moves any process still inside back to the root and removes the cgroup. */
  remove(): void {
    if (!existsSync(this.dir)) return;
    const left = readFileSync(path.join(this.dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    for (const pid of left) {
      try {
        writeFileSync(this.parentProcs, pid);
      } catch {
        // exited meanwhile
      }
    }
    rmdirSync(this.dir);
  }
}
