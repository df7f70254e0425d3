/**
 * What the explain bench reads from the batcher's own `/metrics` (prom-client's default metrics): the event-loop
 * delay since the previous scrape (prom-client resets its `monitorEventLoopDelay` histogram at each one) and the GC
 * pause histogram, whose difference between two scrapes is the window's pauses.
 */
import http from 'node:http';

export interface Scrape {
  loopMaxMs: number | null;
  loopP99Ms: number | null;
  /** Per GC kind: pauses, their total (s), and how many lasted more than 10 ms. */
  gc: Record<string, { count: number; sumS: number; over10ms: number }>;
}

export type GcFigures = Record<string, { count: number; totalMs: number; over10ms: number }>;

function sample(text: string, name: string): number | null {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

/** Pure: the figures of one Prometheus text exposition. */
export function parseScrape(text: string): Scrape {
  const gc: Scrape['gc'] = {};
  const entry = (kind: string) => (gc[kind] ??= { count: 0, sumS: 0, over10ms: 0 });
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} ([0-9.eE+-]+)$/gm)) {
    const e = entry(m[2]!);
    if (m[1] === 'count') e.count = Number(m[3]);
    else e.sumS = Number(m[3]);
  }
  // count - (pauses <= 10 ms)
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_bucket\{le="0\.01",kind="(\w+)"\} ([0-9.eE+-]+)$/gm))
    entry(m[1]!).over10ms = -Number(m[2]);
  for (const e of Object.values(gc)) e.over10ms += e.count;
  const ms = (x: number | null) => (x === null ? null : x * 1000);
  return {
    loopMaxMs: ms(sample(text, 'nodejs_eventloop_lag_max_seconds')),
    loopP99Ms: ms(sample(text, 'nodejs_eventloop_lag_p99_seconds')),
    gc,
  };
}

/** One scrape (it resets the batcher's event-loop delay histogram: the next one covers the time since). */
export function scrape(url: string): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(parseScrape(body)));
      })
      .on('error', reject);
  });
}

/** Pure: the pauses between two scrapes, per kind; null when the batcher exports no GC figures. */
export function gcDelta(before: Scrape, after: Scrape): GcFigures | null {
  const kinds = Object.keys(after.gc);
  if (kinds.length === 0) return null;
  const out: GcFigures = {};
  for (const k of kinds) {
    const a = after.gc[k]!;
    const b = before.gc[k] ?? { count: 0, sumS: 0, over10ms: 0 };
    out[k] = { count: a.count - b.count, totalMs: (a.sumS - b.sumS) * 1000, over10ms: a.over10ms - b.over10ms };
  }
  return out;
}
