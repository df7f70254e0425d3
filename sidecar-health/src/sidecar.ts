/**
 * Wires the pieces: an evaluator loop (read heartbeat -> update history -> verdict -> cache + metrics), a CFS poll
 * at most once per poll period, and the express app that serves the cache.
 */
import { constants as fsc, promises as fs } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CfsClient, getLogger, listen, readHeartbeat, type HeartbeatReadResult } from '@cfs-batcher/shared';
import type { Express } from 'express';
import { createApp } from './app';
import { observeCfs, type SidecarCfsClient } from './cfs-observer';
import type { SidecarConfig } from './config';
import { Tracker, type CfsCache, type Now } from './history';
import { SidecarMetrics } from './metrics';
import { buildStatus, type Evaluation } from './status';
import { evaluateStartup } from './startup-gate';
import { evaluate } from './verdict';

const log = getLogger('sidecar.health');

export const systemClock = (): Now => ({ wallMs: Date.now(), monoMs: performance.now() });

export interface SidecarDeps {
  clock?: () => Now;
  /** null disables CFS queries; default: a CfsClient from config.cfs with short timeouts and no retries. */
  cfsClient?: SidecarCfsClient | null;
  readHeartbeat?: (p: string) => Promise<HeartbeatReadResult>;
  defaultMetrics?: boolean;
}

export interface Sidecar {
  app: Express;
  metrics: SidecarMetrics;
  /** Starts listening and the evaluator loop; resolves with the bound port. */
  start(): Promise<number>;
  stop(): Promise<void>;
  /** One evaluation now (the loop calls this; tests call it directly with a fake clock). */
  refresh(): Promise<Evaluation>;
  /** One CFS query round now (ignored while one is in flight). */
  pollCfs(): Promise<void>;
  evaluation(): Evaluation | null;
  status(): Record<string, unknown> | null;
}

export function createSidecar(config: SidecarConfig, deps: SidecarDeps = {}): Sidecar {
  const clock = deps.clock ?? systemClock;
  const read = deps.readHeartbeat ?? readHeartbeat;
  const t = config.thresholds;
  const client: SidecarCfsClient | null =
    deps.cfsClient !== undefined
      ? deps.cfsClient
      : config.cfsPollMs > 0
        ? new CfsClient({
            ...config.cfs,
            // A probe period is 10 s: one short try per poll, never a retry chain.
            connectTimeoutMs: Math.min(config.cfs.connectTimeoutMs ?? config.cfsTimeoutMs, config.cfsTimeoutMs),
            requestTimeoutMs: config.cfsTimeoutMs,
            retryBudgetMs: 0,
            // the poll says a change of reachability itself, not each failed poll
            logFailures: false,
          })
        : null;
  const metrics = new SidecarMetrics({ defaultMetrics: deps.defaultMetrics });
  const tracker = new Tracker(clock());
  const cfs: CfsCache = { latest: null, lastSuccess: null };
  let current: Evaluation | null = null;
  let lastTickMono: number | null = null;
  let volume = { ok: false, message: 'heartbeat volume not checked yet' };
  let cfsInFlight: Promise<void> | null = null;
  let lastPollStartMono = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | null = null;
  let server: Server | null = null;
  let stopped = false;
  const abort = new AbortController();

  function logChanges(prev: Evaluation | null, next: Evaluation): void {
    const v = next.verdict;
    if (!prev || prev.verdict.reason !== v.reason || prev.verdict.live !== v.live) {
      const meta = { reason: v.reason, live: v.live, previous: prev?.verdict.reason ?? null };
      if (v.live) log.info(`Batcher verdict: ${v.message}`, meta);
      else log.warn(`Batcher verdict: ${v.message}`, meta);
    }
    const pb = prev?.history.badRead?.reason ?? null;
    const nb = next.history.badRead;
    if (nb && nb.reason !== pb && nb.reason !== 'missing')
      log.warn(`Heartbeat file unusable: ${nb.detail}`, { read: nb.reason });
    if (prev && next.history.restarts > prev.history.restarts) {
      log.info(
        `New batcher instance ${next.history.current?.id ?? '?'} (restart ${next.history.restarts} seen by this sidecar)`,
      );
    }
    if (prev?.startup.ready !== next.startup.ready)
      log.info(`Batcher startup gate: ${next.startup.message}`, { ready: next.startup.ready });
  }

  async function checkVolume(): Promise<void> {
    const dir = path.dirname(config.heartbeatPath);
    try {
      await fs.access(dir, fsc.R_OK | fsc.X_OK);
      volume = { ok: true, message: `heartbeat volume ${dir} is readable` };
    } catch (err) {
      const msg = `heartbeat volume ${dir} is not readable: ${(err as Error).message}`;
      if (volume.ok || volume.message !== msg) log.warn(msg);
      volume = { ok: false, message: msg };
    }
  }

  async function refresh(): Promise<Evaluation> {
    const [hbRead] = await Promise.all([read(config.heartbeatPath), checkVolume()]);
    const now = clock();
    const history = tracker.observe(hbRead, cfs, now, t);
    const verdict = evaluate({ now, heartbeatRead: hbRead, history, cfs, thresholds: t });
    const startup = evaluateStartup(verdict, history, now, t);
    const next: Evaluation = { now, read: hbRead, history, cfs: { ...cfs }, verdict, startup };
    logChanges(current, next);
    current = next;
    lastTickMono = now.monoMs;
    metrics.update(verdict, history, cfs);
    return next;
  }

  function pollCfs(): Promise<void> {
    if (!client) return Promise.resolve();
    if (cfsInFlight) return cfsInFlight;
    lastPollStartMono = clock().monoMs;
    cfsInFlight = (async () => {
      const o = await observeCfs(client, clock, abort.signal);
      const wasOk = cfs.latest?.ok;
      cfs.latest = o;
      if (o.ok) cfs.lastSuccess = o;
      if (wasOk !== o.ok) {
        if (o.ok) log.info('CFS reachable from the sidecar', { duration_ms: o.durationMs });
        else log.warn(`CFS not reachable from the sidecar (liveness is not affected): ${o.error ?? ''}`);
      }
    })().finally(() => {
      cfsInFlight = null;
    });
    return cfsInFlight;
  }

  async function loop(): Promise<void> {
    if (stopped) return;
    try {
      if (client && config.cfsPollMs > 0 && clock().monoMs - lastPollStartMono >= config.cfsPollMs) void pollCfs();
      await refresh();
    } catch (err) {
      // Nothing above should throw; if it does, keep the last verdict and say why (healthz turns red if it persists).
      log.error(`Evaluation failed: ${(err as Error).message}`, { stack: (err as Error).stack });
    }
    if (!stopped) timer = setTimeout(() => void loop(), config.evalIntervalMs);
  }

  const selfHealth = (): { ok: boolean; message: string } => {
    if (lastTickMono === null) return { ok: true, message: 'sidecar starting' };
    const age = clock().monoMs - lastTickMono;
    const limit = Math.max(5 * config.evalIntervalMs, 10_000);
    return age <= limit
      ? { ok: true, message: `evaluator loop ran ${Math.round(age)} ms ago` }
      : { ok: false, message: `evaluator loop has not run for ${Math.round(age / 1000)} s (limit ${limit / 1000} s)` };
  };

  const status = (): Record<string, unknown> | null =>
    current
      ? buildStatus(current, t, { heartbeatPath: config.heartbeatPath, cfsPollMs: client ? config.cfsPollMs : 0 })
      : null;

  const app = createApp(
    {
      evaluation: () => current,
      status,
      selfHealth,
      readiness: () => (current ? volume : { ok: false, message: 'the sidecar has not evaluated the heartbeat yet' }),
    },
    metrics,
  );

  return {
    app,
    metrics,
    refresh,
    pollCfs,
    evaluation: () => current,
    status,
    async start() {
      await loop();
      // not app.listen: Express 5 hands a listen error to the callback, where it was read as an address
      const s = createServer(app);
      const { port } = await listen(s, config.port, config.host);
      server = s;
      log.info(`Health sidecar listening on ${config.host}:${port}`, {
        heartbeat_path: config.heartbeatPath,
        cfs_poll_ms: client ? config.cfsPollMs : 0,
      });
      return port;
    },
    async stop() {
      stopped = true;
      abort.abort();
      if (timer) clearTimeout(timer);
      await cfsInFlight?.catch(() => undefined);
      if (server) {
        const s = server;
        server = null;
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
