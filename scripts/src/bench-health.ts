/**
 * The health half of `npm run bench`: hang detection per hang kind (runs in parallel pods) and the zero-false-restart
 * conditions (one pod at a time: each is a load of its own). Returns the raw runs and the summary rows.
 */
import { formatGaps } from './bench-beats';
import { CONDITIONS, runFalseRestarts, type Condition, type FalseRestartRun } from './bench-false-restarts';
import { HANG_KINDS, runDetect, type DetectKind, type DetectRun } from './bench-detect';
import { runNeverSend, type StallRun } from './bench-stall';
import { loadAverageText } from './bench-procs';
import { fmt, median, type Row } from './bench-stats';

const load = (): string => `load ${loadAverageText()}`;

export interface HealthArgs {
  detectRuns: number;
  conditions: Condition[];
  falseRestartSeconds: number;
  /** batcher_check_interval of the false-restart pods (CFS default 10). */
  checkIntervalS: number;
  /**
   * batcher_check_interval of the detection pods (1: a batcher that beats only at phase changes, as earlier builds
   * did, then beats about as often as one that beats every second).
   */
  detectCheckIntervalS: number;
}

export function parseConditions(text: string): Condition[] {
  const out = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const c of out)
    if (!(CONDITIONS as readonly string[]).includes(c))
      throw new Error(`unknown condition ${c} (${CONDITIONS.join(', ')})`);
  return out as Condition[];
}

const range = (xs: number[]): string =>
  xs.length ? `${fmt(Math.min(...xs))} / ${fmt(median(xs))} / ${fmt(Math.max(...xs))} s` : 'n/a';

export async function runDetectBench(
  a: HealthArgs,
  log: (m: string) => void,
  errors: string[],
): Promise<{ runs: DetectRun[]; rows: Row[] }> {
  const runs: DetectRun[] = [];
  for (const kind of [...HANG_KINDS, 'crash'] as DetectKind[]) {
    log(
      `detection bench: ${kind}, ${a.detectRuns} pods in parallel (manifest probe settings, check interval ${a.detectCheckIntervalS} s)`,
    );
    const settled = await Promise.allSettled(
      Array.from({ length: a.detectRuns }, () => runDetect(kind, { checkIntervalS: a.detectCheckIntervalS })),
    );
    for (const r of settled) {
      if (r.status === 'fulfilled') {
        runs.push(r.value);
        log(
          `  ${kind}: SIGTERM/exit at ${fmt(r.value.detectS)} s, SIGKILL/exit ${fmt(r.value.killS)} s, cycling again at ${fmt(r.value.recoverS)} s (bound ${r.value.boundS} s); beats before: ${formatGaps(r.value.gaps)}`,
        );
      } else errors.push(`detect ${kind}: ${(r.reason as Error).message}`);
    }
  }
  const rows: Row[] = [];
  for (const kind of HANG_KINDS) {
    const d = runs.filter((r) => r.kind === kind);
    if (d.length === 0) continue;
    rows.push({
      metric: `hang (${kind}) -> SIGTERM, min / median / max`,
      value: range(d.map((r) => r.detectS)),
      runs: d.map((r) => fmt(r.detectS)).join(', '),
      original: 'never',
    });
    const kills = d.map((r) => r.killS ?? NaN).filter((x) => !Number.isNaN(x));
    rows.push({
      metric: `hang (${kind}) -> SIGKILL or exit, min / median / max`,
      value: `${range(kills)} (bound ${d[0]!.boundS} s)`,
      runs: kills.map((x) => fmt(x)).join(', '),
      original: 'never',
    });
    rows.push({
      metric: `hang (${kind}) -> new instance completed a cycle`,
      value: `${fmt(median(d.map((r) => r.recoverS)))} s`,
      runs: d.map((r) => fmt(r.recoverS)).join(', '),
    });
  }
  const c = runs.filter((r) => r.kind === 'crash');
  if (c.length)
    rows.push({
      metric: 'crash (SIGKILL) -> new instance completed a cycle',
      value: `${fmt(median(c.map((r) => r.recoverS)))} s`,
      runs: c.map((r) => fmt(r.recoverS)).join(', '),
    });
  return { runs, rows };
}

export async function runFalseRestartBench(
  a: HealthArgs,
  log: (m: string) => void,
  errors: string[],
): Promise<{ runs: FalseRestartRun[]; rows: Row[] }> {
  const runs: FalseRestartRun[] = [];
  const rows: Row[] = [];
  for (const condition of a.conditions) {
    log(
      `false-restart bench: ${condition} for ${a.falseRestartSeconds} s (check interval ${a.checkIntervalS} s; ${load()})`,
    );
    try {
      const r = await runFalseRestarts(condition, { seconds: a.falseRestartSeconds, checkIntervalS: a.checkIntervalS });
      runs.push(r);
      const line = `restarts ${r.batcherRestarts}, /livez failures ${r.livenessFailures}, sidecar restarts ${r.sidecarRestarts}; beats: ${formatGaps(r.gaps)}`;
      log(`  ${line} (${r.note}; ${load()})`);
      rows.push({
        metric: `false restarts: ${condition} (${r.seconds} s)`,
        value: `${r.batcherRestarts} (largest beat gap ${fmt(r.gaps.maxMs, 0)} ms)`,
        runs: `${r.note}; ${line}`,
      });
      if (r.batcherRestarts > 0) errors.push(`false restart under ${condition}: ${r.batcherRestarts}`);
    } catch (err) {
      errors.push(`false-restarts ${condition}: ${(err as Error).message}`);
      log(`  FAILED: ${(err as Error).message}`);
    }
  }
  return { runs, rows };
}

/** Never-send detection, `a.detectRuns` pods in parallel with CSM's options (bench-stall.ts). */
export async function runNeverSendBench(
  a: HealthArgs,
  log: (m: string) => void,
  errors: string[],
): Promise<{ runs: StallRun[]; rows: Row[] }> {
  log(
    `never-send bench: ${a.detectRuns} pods in parallel (check interval 10 s, batch_window 60 s, manifest probes; ${load()})`,
  );
  const settled = await Promise.allSettled(Array.from({ length: a.detectRuns }, () => runNeverSend()));
  const runs: StallRun[] = [];
  for (const r of settled) {
    if (r.status === 'rejected') {
      errors.push(`never-send: ${(r.reason as Error).message}`);
      continue;
    }
    runs.push(r.value);
    log(
      `  send off -> SIGTERM ${fmt(r.value.detectS)} s at ${load()} (bound ${fmt(r.value.boundS)} s), clock resets after the switch: ${r.value.resetReasons.join(', ') || 'none'}; ${r.value.message}`,
    );
    if (r.value.detectS > r.value.boundS)
      errors.push(`never-send: ${fmt(r.value.detectS)} s > bound ${r.value.boundS} s`);
  }
  const rows: Row[] =
    runs.length === 0
      ? []
      : [
          {
            metric: 'never-send (CSM options) -> SIGTERM, min / median / max',
            value: `${range(runs.map((r) => r.detectS))} (bound ${fmt(runs[0]!.boundS)} s)`,
            runs: runs.map((r) => fmt(r.detectS)).join(', '),
            original: 'never',
          },
        ];
  return { runs, rows };
}
