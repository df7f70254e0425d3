/** Minimal HTTP client for tests: never throws, always bounded by a timeout, loopback only. */
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  text: string;
  json: unknown;
  ms: number;
}

export type HttpResult = HttpAnswer | { status: 0; error: string; ms: number };

export function request(
  url: string,
  o: { method?: string; body?: unknown; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const t0 = process.hrtime.bigint();
  const ms = (): number => Number(process.hrtime.bigint() - t0) / 1e6;
  return new Promise((resolve) => {
    const payload = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
    const req = http.request(
      url,
      {
        method: o.method ?? 'GET',
        agent: false,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
          ...o.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => resolve({ status: 0, error: err.message, ms: ms() }));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, text, json, ms: ms() });
        });
      },
    );
    req.setTimeout(o.timeoutMs ?? 5000, () => req.destroy(new Error(`timeout after ${o.timeoutMs ?? 5000} ms`)));
    req.on('error', (err) => resolve({ status: 0, error: err.message, ms: ms() }));
    if (payload) req.write(payload);
    req.end();
  });
}

export async function getJson<T = unknown>(url: string, timeoutMs = 5000): Promise<T> {
  const r = await request(url, { timeoutMs });
  if (r.status !== 200 || !('json' in r)) {
    throw new Error(
      `GET ${url}: ${r.status === 0 ? (r as { error: string }).error : `HTTP ${r.status} ${(r as HttpAnswer).text.slice(0, 200)}`}`,
    );
  }
  return r.json as T;
}

export async function sendJson<T = unknown>(method: string, url: string, body: unknown, timeoutMs = 5000): Promise<T> {
  const r = await request(url, { method, body, timeoutMs });
  if (r.status < 200 || r.status > 299 || !('json' in r)) {
    throw new Error(
      `${method} ${url}: ${r.status === 0 ? (r as { error: string }).error : `HTTP ${r.status} ${(r as HttpAnswer).text.slice(0, 300)}`}`,
    );
  }
  return r.json as T;
}
