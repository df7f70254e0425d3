/**
 * The sidecar's own cheap look at CFS: one limit=1 page of pending components and of running/pending batcher
 * sessions. Never called on a probe path; the evaluator loop runs it at most once per poll period.
 */
import {
  BATCHER_SESSION_PREFIX,
  isCfsError,
  type CfsClient,
  type ComponentFilter,
  type ListOptions,
  type SessionFilter,
} from '@cfs-batcher/shared';
import type { CfsObservation, Now } from './history';

/** The two client calls the sidecar needs (the shared CfsClient satisfies it; tests may fake it). */
export type SidecarCfsClient = Pick<CfsClient, 'listComponents' | 'listSessions'>;

async function firstPage<T>(gen: AsyncGenerator<T>): Promise<T | undefined> {
  try {
    const r = await gen.next();
    return r.done ? undefined : r.value;
  } finally {
    await gen.return(undefined); // stop paging after the first page
  }
}

function describe(err: unknown): string {
  if (isCfsError(err)) return `${err.kind}${err.status !== undefined ? ` ${err.status}` : ''}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export async function observeCfs(
  client: SidecarCfsClient,
  now: () => Now,
  signal?: AbortSignal,
): Promise<CfsObservation> {
  const start = now();
  const o: ListOptions = { signal, pageSize: 1 };
  const done = (rest: Partial<CfsObservation> & { ok: boolean }): CfsObservation => ({
    atMono: start.monoMs,
    atWall: start.wallMs,
    durationMs: now().monoMs - start.monoMs,
    ...rest,
  });
  try {
    const pendingFilter: ComponentFilter = { enabled: true, status: 'pending' };
    const page = await firstPage(client.listComponents(pendingFilter, o));
    // An invalid record the server listed as pending is still pending work.
    const pending = page !== undefined && page.components.length + page.invalid.length > 0;
    let active: { name: string; status: string } | null = null;
    if (pending) {
      for (const status of ['running', 'pending'] as const) {
        const filter: SessionFilter = { name_contains: BATCHER_SESSION_PREFIX, status, limit: 1 };
        const sp = await firstPage(client.listSessions(filter, { signal }));
        const s =
          sp?.sessions[0] ??
          (sp && sp.invalid.length > 0 ? { name: sp.invalid[0]?.id ?? '(invalid record)' } : undefined);
        if (s) {
          active = { name: String(s.name), status };
          break;
        }
      }
    }
    return done({ ok: true, pendingComponents: pending, activeSession: active });
  } catch (err) {
    return done({ ok: false, error: describe(err) });
  }
}
