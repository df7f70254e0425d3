/** Request counters by method + route template, so tests and benchmarks can count requests per cycle. */
import type { NextFunction, Request, Response } from 'express';
import { isControlRequest } from './bypass';

const TEMPLATES: Array<[RegExp, string]> = [
  [/^\/v3\/components\/[^/]+$/, '/v3/components/{component_id}'],
  [/^\/v3\/sessions\/[^/]+$/, '/v3/sessions/{session_name}'],
  [/^\/v3\/configurations\/[^/]+$/, '/v3/configurations/{configuration_id}'],
];

export function routeTemplate(path: string): string {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  for (const [re, t] of TEMPLATES) if (re.test(p)) return t;
  return p;
}

export interface StatsSnapshot {
  total: number;
  /** "GET /v3/components" -> count */
  byRoute: Record<string, number>;
  /** "GET /v3/components 200" -> count; faults that never answer count as "reset"/"hang". */
  byRouteStatus: Record<string, number>;
  /** Response body bytes sent (Content-Length of finished answers), what a client pulls from CFS. */
  bytes: number;
  /** "GET /v3/components" -> response body bytes */
  bytesByRoute: Record<string, number>;
  /** "GET /v3/components" -> the most requests in progress at once (a client's concurrency as CFS sees it). */
  maxInFlightByRoute: Record<string, number>;
}

export class RequestStats {
  private total = 0;
  private byRoute = new Map<string, number>();
  private byRouteStatus = new Map<string, number>();
  private bytes = 0;
  private bytesByRoute = new Map<string, number>();
  private inFlight = new Map<string, number>();
  private maxInFlight = new Map<string, number>();

  count(method: string, path: string): string {
    const key = `${method} ${routeTemplate(path)}`;
    this.total++;
    this.byRoute.set(key, (this.byRoute.get(key) ?? 0) + 1);
    return key;
  }

  countStatus(key: string, status: string): void {
    const k = `${key} ${status}`;
    this.byRouteStatus.set(k, (this.byRouteStatus.get(k) ?? 0) + 1);
  }

  countBytes(key: string, n: number): void {
    this.bytes += n;
    this.bytesByRoute.set(key, (this.bytesByRoute.get(key) ?? 0) + n);
  }

  get(key: string): number {
    return this.byRoute.get(key) ?? 0;
  }

  /** The most requests of `key` in progress at once since the last reset. */
  peakInFlight(key: string): number {
    return this.maxInFlight.get(key) ?? 0;
  }

  private enter(key: string): () => void {
    const n = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, n);
    if (n > (this.maxInFlight.get(key) ?? 0)) this.maxInFlight.set(key, n);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
    };
  }

  snapshot(): StatsSnapshot {
    return {
      total: this.total,
      byRoute: Object.fromEntries(this.byRoute),
      byRouteStatus: Object.fromEntries(this.byRouteStatus),
      bytes: this.bytes,
      bytesByRoute: Object.fromEntries(this.bytesByRoute),
      maxInFlightByRoute: Object.fromEntries(this.maxInFlight),
    };
  }

  reset(): void {
    this.total = 0;
    this.byRoute.clear();
    this.byRouteStatus.clear();
    this.bytes = 0;
    this.bytesByRoute.clear();
    // Requests still in progress stay counted: their end must not take the gauge below zero.
    this.maxInFlight.clear();
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      if (req.path.startsWith('/__sim') || isControlRequest(req)) return next();
      const key = this.count(req.method, req.path);
      const leave = this.enter(key);
      let done = false;
      res.on('finish', () => {
        done = true;
        leave();
        this.countStatus(key, String(res.statusCode));
        // express sets Content-Length on every JSON/text answer; a bodiless answer has none (0 bytes)
        const len = Number(res.getHeader('content-length') ?? 0);
        if (Number.isFinite(len) && len > 0) this.countBytes(key, len);
      });
      res.on('close', () => {
        leave();
        if (!done) this.countStatus(key, String(res.locals.fault ?? 'aborted'));
      });
      next();
    };
  }
}
