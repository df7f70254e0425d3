/** The few CFS calls the local pod makes itself: wait for the simulator, set demo options, count statuses and sessions. */
import axios from 'axios';

const TIMEOUT_MS = 3000;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls GET /options until it answers 200, the deadline passes, or `gaveUp()` says the server process died. */
export async function waitForCfs(baseUrl: string, deadlineMs: number, gaveUp: () => boolean): Promise<void> {
  const until = Date.now() + deadlineMs;
  let last = 'no answer';
  while (Date.now() < until) {
    if (gaveUp()) throw new Error(`CFS simulator exited before answering at ${baseUrl}`);
    try {
      const res = await axios.get(`${baseUrl}/options`, { timeout: TIMEOUT_MS, validateStatus: () => true });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`CFS simulator at ${baseUrl} did not answer within ${deadlineMs / 1000} s (${last})`);
}

export async function patchOptions(baseUrl: string, patch: Record<string, unknown>): Promise<void> {
  const res = await axios.patch(`${baseUrl}/options`, patch, { timeout: TIMEOUT_MS, validateStatus: () => true });
  if (res.status !== 200)
    throw new Error(`PATCH ${baseUrl}/options answered HTTP ${res.status}: ${JSON.stringify(res.data).slice(0, 300)}`);
}

/** Pages through GET /components (v3 `next` paging) and counts configuration_status values. Bounded to 100 pages. */
export async function countComponentStatuses(baseUrl: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let params: Record<string, unknown> = { limit: 1000 };
  for (let page = 0; page < 100; page++) {
    const res = await axios.get(`${baseUrl}/components`, { params, timeout: TIMEOUT_MS, validateStatus: () => true });
    if (res.status !== 200) throw new Error(`GET /components answered HTTP ${res.status}`);
    const body = res.data as { components?: unknown; next?: unknown };
    if (!Array.isArray(body.components)) throw new Error('GET /components: no components array');
    for (const c of body.components as Array<{ configuration_status?: unknown }>) {
      const s = typeof c.configuration_status === 'string' ? c.configuration_status : 'unknown';
      counts[s] = (counts[s] ?? 0) + 1;
    }
    if (body.next === null || body.next === undefined || typeof body.next !== 'object') return counts;
    params = Object.fromEntries(
      Object.entries(body.next as Record<string, unknown>).filter(([, v]) => v !== null && v !== undefined),
    );
  }
  return counts;
}

/** Sessions the batcher ever created, from the simulator's history (`batcher-` names, deleted ones included). */
export async function countBatcherSessions(simOrigin: string): Promise<number> {
  const res = await axios.get(`${simOrigin}/__sim/sessions-history`, {
    timeout: TIMEOUT_MS,
    validateStatus: () => true,
  });
  if (res.status !== 200) throw new Error(`GET /__sim/sessions-history answered HTTP ${res.status}`);
  const sessions = (res.data as { sessions?: Array<{ name?: unknown }> }).sessions ?? [];
  return sessions.filter((s) => typeof s.name === 'string' && s.name.startsWith('batcher-')).length;
}
