/**
 * The local pod's example of `GET /explain/{id}`: once the batcher has finished a cycle, one answer for a demo node,
 * printed with the command that gives it. Best effort and bounded: a batcher that never answers prints nothing.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { readHeartbeat } from '@cfs-batcher/shared';
import { waitFor } from './wait';

/** The first component of a scenario file (the demo node), or null. */
export function demoNode(scenarioFile: string): string | null {
  try {
    const s = JSON.parse(readFileSync(scenarioFile, 'utf8')) as { components?: { id?: unknown }[] };
    const id = s.components?.[0]?.id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

function getReason(port: number, id: string): Promise<string | null> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: `/explain/${encodeURIComponent(id)}`, timeout: 15_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          try {
            const reason = (JSON.parse(text) as { reason?: unknown }).reason;
            resolve(typeof reason === 'string' ? reason : null);
          } catch {
            resolve(null);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** "ID: <sentence>   (node batcher/dist/explain.js ID --url URL)" after the batcher's first cycle, or null. */
export async function explainExample(heartbeatPath: string, port: number, id: string): Promise<string | null> {
  try {
    await waitFor(
      async () => {
        const r = await readHeartbeat(heartbeatPath);
        return r.ok && r.heartbeat.cycle >= 1 ? true : undefined;
      },
      { what: 'the batcher to finish a cycle', timeoutMs: 120_000, intervalMs: 500 },
    );
  } catch {
    return null;
  }
  const reason = await getReason(port, id);
  if (reason === null) return null;
  return `${id}: ${reason}   (node batcher/dist/explain.js ${id} --url http://127.0.0.1:${port})`;
}
