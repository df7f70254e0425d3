/**
 * Beat gaps as the batcher wrote them: polls the heartbeat file and records, for each sequence advance of one
 * instance, the written_at_ms difference from the previous one seen. A missed intermediate beat makes a gap look
 * longer, never shorter, so the figures are an upper bound of the real worst gap.
 */
import { readHeartbeat } from '@cfs-batcher/shared';
import { fmt, percentile } from './bench-stats';

export interface GapSummary {
  beats: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** Gaps per bucket: <=1 s, <=2 s, <=5 s, <=10 s, >10 s. */
  histogram: Record<string, number>;
}

const BUCKETS: Array<[string, number]> = [
  ['<=1s', 1000],
  ['<=2s', 2000],
  ['<=5s', 5000],
  ['<=10s', 10_000],
  ['>10s', Infinity],
];

export function summarizeGaps(gaps: readonly number[]): GapSummary {
  const histogram: Record<string, number> = Object.fromEntries(BUCKETS.map(([k]) => [k, 0]));
  for (const g of gaps) {
    const bucket = BUCKETS.find(([, lim]) => g <= lim)!;
    histogram[bucket[0]] = (histogram[bucket[0]] ?? 0) + 1;
  }
  return {
    beats: gaps.length,
    p50Ms: percentile(gaps, 50),
    p99Ms: percentile(gaps, 99),
    maxMs: gaps.length ? Math.max(...gaps) : null,
    histogram,
  };
}

export function formatGaps(s: GapSummary): string {
  const h = Object.entries(s.histogram)
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
  return `${s.beats} gaps, p50 ${fmt(s.p50Ms, 0)} ms, p99 ${fmt(s.p99Ms, 0)} ms, max ${fmt(s.maxMs, 0)} ms [${h}]`;
}

export class BeatMonitor {
  readonly gaps: number[] = [];
  private last: { instance: string; seq: number; at: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly file: string,
    private readonly stepMs = 100,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.poll(), this.stepMs);
    return this;
  }

  stop(): GapSummary {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    return summarizeGaps(this.gaps);
  }

  /** The newest beat seen (epoch ms written by the batcher), or null. */
  get lastBeatMs(): number | null {
    return this.last?.at ?? null;
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await readHeartbeat(this.file);
      if (!r.ok) return;
      const hb = r.heartbeat;
      const prev = this.last;
      if (prev && prev.instance === hb.instance_id && hb.sequence > prev.seq)
        this.gaps.push(hb.written_at_ms - prev.at);
      if (!prev || prev.instance !== hb.instance_id || hb.sequence > prev.seq)
        this.last = { instance: hb.instance_id, seq: hb.sequence, at: hb.written_at_ms };
    } finally {
      this.busy = false;
    }
  }
}
