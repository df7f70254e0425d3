/** The few CFS calls the local pod makes itself: wait for the simulator, set demo options, count statuses and sessions. */
import http from 'node:http';

const TIMEOUT_MS = 3000;

/** One request on its own connection (node:http: no port is refused, unlike fetch's "bad ports"); any status is an
 * answer (the callers check it), the body parsed when it is JSON; a connection error or TIMEOUT_MS rejects. */
function request(
  method: 'GET' | 'PATCH',
  url: string,
  opts: { params?: Record<string, unknown>; body?: unknown } = {},
): Promise<{ status: number; data: unknown }> {
  const query = new URLSearchParams(
    Object.entries(opts.params ?? {}).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString();
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers = payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {};
  return new Promise((resolve, reject) => {
    const req = http.request(query ? `${url}?${query}` : url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, data: JSON.parse(text) as unknown });
        } catch {
          resolve({ status: res.statusCode ?? 0, data: text });
        }
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`timeout of ${TIMEOUT_MS} ms exceeded`)), TIMEOUT_MS);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(payload);
  });
}

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
      const res = await request('GET', `${baseUrl}/options`);
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
  const res = await request('PATCH', `${baseUrl}/options`, { body: patch });
  if (res.status !== 200)
    throw new Error(`PATCH ${baseUrl}/options answered HTTP ${res.status}: ${JSON.stringify(res.data).slice(0, 300)}`);
}

/** Pages through GET /components (v3 `next` paging) and counts configuration_status values. Bounded to 100 pages. */
export async function countComponentStatuses(baseUrl: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let params: Record<string, unknown> = { limit: 1000 };
  for (let page = 0; page < 100; page++) {
    const res = await request('GET', `${baseUrl}/components`, { params });
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
  const res = await request('GET', `${simOrigin}/__sim/sessions-history`);
  if (res.status !== 200) throw new Error(`GET /__sim/sessions-history answered HTTP ${res.status}`);
  const sessions = (res.data as { sessions?: Array<{ name?: unknown }> }).sessions ?? [];
  return sessions.filter((s) => typeof s.name === 'string' && s.name.startsWith('batcher-')).length;
}
