/**
 * The test's side of the simulator, on its control port (never faulted, counted or closed): member snapshots and
 * session intervals from its own history, component states, faults, outages and request counts.
 */
import type { HistoryEntry as SimHistoryEntry } from '@cfs-batcher/cfs-sim';
import { getJson, request, sendJson } from './http';
import { assertInvariants, type SessionRecord } from './invariants';

export class SimControl {
  constructor(private readonly origin: () => string) {}

  async sessions(): Promise<SessionRecord[]> {
    const h = await getJson<{ sessions: SimHistoryEntry[] }>(`${this.origin()}/__sim/sessions-history`);
    return h.sessions.map((s) => ({
      name: s.name,
      configuration: s.configuration,
      configuration_limit: s.configuration_limit,
      hosts: s.hosts,
      tags: s.tags ?? {},
      created_ms: s.created_ms,
      completed_ms: s.completed_ms,
      deleted_ms: s.deleted_ms,
      members: s.members,
    }));
  }

  async assertInvariants(maxBatchSize: number): Promise<number> {
    return assertInvariants(await this.sessions(), { maxBatchSize, requireMembers: true });
  }

  async componentStatuses(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const body = await getJson<{ components: Array<{ id: string; configuration_status?: string }> }>(
      `${this.origin()}/v3/components?limit=10000`,
    );
    for (const c of body.components) out[c.id] = c.configuration_status ?? '';
    return out;
  }

  async addFault(rule: Record<string, unknown> | Record<string, unknown>[]): Promise<void> {
    await sendJson('POST', `${this.origin()}/__sim/faults`, rule);
  }

  async clearFaults(): Promise<void> {
    await request(`${this.origin()}/__sim/faults`, { method: 'DELETE' });
  }

  async operator(cmd: Record<string, unknown>): Promise<unknown> {
    return sendJson('POST', `${this.origin()}/__sim/operator`, cmd);
  }

  async patchOptions(patch: Record<string, unknown>): Promise<void> {
    await sendJson('PATCH', `${this.origin()}/v3/options`, patch);
  }

  async stats(): Promise<{ total: number; byRoute: Record<string, number>; byRouteStatus: Record<string, number> }> {
    return getJson(`${this.origin()}/__sim/stats`);
  }

  /** POST /v3/sessions requests the programs sent (answered or not). */
  async sessionPosts(): Promise<number> {
    return (await this.stats()).byRoute['POST /v3/sessions'] ?? 0;
  }

  /** Closes the CFS port for durationMs (connection refused); the simulator reopens it by itself. */
  async outage(durationMs: number): Promise<void> {
    await sendJson('POST', `${this.origin()}/__sim/outage`, { durationMs });
  }
}
