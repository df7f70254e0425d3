/**
 * A session member as it was when the session was created: what the e2e invariants compare (desired config, the
 * pending layers, the latest state entry's status, tags), read from the simulator's own state at POST time.
 */
import type { SimState } from './state';
import { computeStatus } from './status';

export interface MemberSnapshot {
  desired_config?: string;
  /** Comma-joined indices of the desired layers that were pending, e.g. "0,2". */
  pending_layers: string;
  /** state[-1].status, '' when the component had no state. */
  latest_status: string;
  tags: Record<string, string>;
  /** configuration_status as a read would have returned it. */
  status: string;
  enabled: boolean;
  error_count: number;
}

/** Snapshots of the hosts that exist as components (a host that is no component has no entry). */
export function memberSnapshots(state: SimState, hosts: readonly string[]): Record<string, MemberSnapshot> {
  const out: Record<string, MemberSnapshot> = {};
  const opts = state.effectiveOptions();
  for (const id of hosts) {
    const c = state.components.get(id);
    if (!c) continue;
    const config = c.desired_config ? state.configurations.get(c.desired_config) : undefined;
    const computed = computeStatus(c, config, opts);
    const last = (c.state ?? [])[(c.state ?? []).length - 1];
    out[id] = {
      desired_config: c.desired_config,
      pending_layers: computed.layers.flatMap((l, i) => (l === 'pending' ? [String(i)] : [])).join(','),
      latest_status: last?.status ?? '',
      tags: { ...(c.tags ?? {}) },
      status: computed.status,
      enabled: c.enabled !== false,
      error_count: c.error_count ?? 0,
    };
  }
  return out;
}
