/**
 * `main.js check [live|startup] [--standalone]`: an exec-style probe. It asks the running sidecar for its cached
 * verdict; when no sidecar answers (or with --standalone) it judges one heartbeat read on its own, which can only use
 * written_at_ms (a single read cannot see the sequence advance) and never queries CFS.
 */
import http from 'node:http';
import { readHeartbeat } from '@cfs-batcher/shared';
import type { SidecarConfig } from './config';
import { Tracker, type Now } from './history';
import { evaluateStartup } from './startup-gate';
import { evaluate } from './verdict';

export type CheckKind = 'live' | 'startup';

export interface CheckResult {
  ok: boolean;
  source: 'sidecar' | 'standalone';
  body: Record<string, unknown>;
}

function askSidecar(port: number, kind: CheckKind, timeoutMs: number): Promise<CheckResult | null> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: kind === 'live' ? '/livez' : '/startupz', timeout: timeoutMs },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (text.length < 65536) text += c;
        });
        res.on('end', () => {
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            body = { message: text.slice(0, 500) };
          }
          resolve({ ok: res.statusCode === 200, source: 'sidecar', body });
        });
        res.on('error', () => resolve(null));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
  });
}

export async function standaloneCheck(config: SidecarConfig, kind: CheckKind, now: Now): Promise<CheckResult> {
  const t = config.thresholds;
  // No history: the grace is over (the startupProbe covers start-up) and freshness rests on written_at_ms alone.
  const tracker = new Tracker({ wallMs: now.wallMs - t.startupGraceMs - 1, monoMs: now.monoMs - t.startupGraceMs - 1 });
  const read = await readHeartbeat(config.heartbeatPath);
  const cfs = { latest: null, lastSuccess: null };
  const observed = tracker.observe(read, cfs, now, t);
  // One read cannot see the sequence advance: back-date the sidecar's sightings to the file's own stamps, and let the
  // file's age stand for "seen advancing" (the startup gate then asks that it be a few seconds old at most).
  const cur = observed.current;
  const hb = observed.lastGood;
  const ago = (ms: number): number => now.monoMs - Math.max(0, now.wallMs - ms);
  const history =
    cur && hb
      ? {
          ...observed,
          current: {
            ...cur,
            proven: true,
            advancedAtMono: ago(hb.written_at_ms),
            rewrittenSeenMono: ago(hb.written_at_ms),
            phaseSeenMono: ago(hb.phase_started_at_ms),
          },
        }
      : observed;
  const v = evaluate({ now, heartbeatRead: read, history, cfs, thresholds: t });
  if (kind === 'startup') {
    const s = evaluateStartup(v, history, now, t);
    return { ok: s.ready, source: 'standalone', body: { ready: s.ready, message: s.message } };
  }
  return { ok: v.live, source: 'standalone', body: { live: v.live, reason: v.reason, message: v.message } };
}

export async function runCheck(
  config: SidecarConfig,
  kind: CheckKind,
  standalone: boolean,
  now: () => Now,
): Promise<CheckResult> {
  if (!standalone) {
    const fromSidecar = await askSidecar(config.port, kind, 2000);
    if (fromSidecar) return fromSidecar;
  }
  return standaloneCheck(config, kind, now());
}
