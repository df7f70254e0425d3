/**
 * What a failed or skipped component's CFS record tells the operator (pure): the last session that ran it, the layer
 * it stopped on (by index in its configuration and by name), when, and the command that retries it.
 */
import type { CfsComponent } from '@cfs-batcher/shared';

export interface LastSession {
  name: string;
  /** The layer's result in that session: applied, failed, skipped, incomplete. */
  status: string;
  at: string;
  /** The layer of the desired configuration that entry is for (matched by clone_url and playbook), or null. */
  layer: { index: number; name: string | null; clone_url: string; playbook: string } | null;
}

interface StateEntry {
  session_name?: unknown;
  status?: unknown;
  last_updated?: unknown;
  clone_url?: unknown;
  playbook?: unknown;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The latest state entry of any session (a failed one first: the failure is the fact to find), with the desired
 * layer it belongs to. `names`: the configuration's layer names, when read.
 */
export function lastSessionOf(raw: CfsComponent, names?: readonly string[]): LastSession | null {
  const state = (Array.isArray(raw.state) ? raw.state : []) as StateEntry[];
  const withSession = state.filter((e) => text(e.session_name) !== '');
  const latest = (entries: StateEntry[]): StateEntry | undefined =>
    entries.reduce<StateEntry | undefined>(
      (best, e) => (best === undefined || text(e.last_updated) >= text(best.last_updated) ? e : best),
      undefined,
    );
  const e = latest(withSession.filter((x) => text(x.status) === 'failed')) ?? latest(withSession);
  if (e === undefined) return null;
  const desired = Array.isArray(raw.desired_state) ? raw.desired_state : [];
  const index = desired.findIndex((d) => d.clone_url === text(e.clone_url) && d.playbook === text(e.playbook));
  const layerName = index < 0 ? null : (desired[index]?.name ?? names?.[index] ?? null);
  return {
    name: text(e.session_name),
    status: text(e.status),
    at: text(e.last_updated),
    layer: index < 0 ? null : { index, name: layerName, clone_url: text(e.clone_url), playbook: text(e.playbook) },
  };
}

/** An id as a shell word: bare when it is safe, single-quoted otherwise (a space, a quote). */
function shellWord(id: string): string {
  return /^[A-Za-z0-9_.,:@%+=-]+$/.test(id) ? id : `'${id.replace(/'/g, `'\\''`)}'`;
}

/** How to make CFS retry it: clear its error count (the CLI, or the PATCH for those without it). */
export function retryCommand(
  id: string,
  cfsBaseUrl = 'http://cray-cfs-api/v3',
): { cli: string; patch: { method: 'PATCH'; url: string; body: { error_count: 0 } } } {
  return {
    cli: `cray cfs v3 components update ${shellWord(id)} --error-count 0`,
    patch: {
      method: 'PATCH',
      url: `${cfsBaseUrl.replace(/\/+$/, '')}/components/${encodeURIComponent(id)}`,
      body: { error_count: 0 },
    },
  };
}

/** Why a configured component's last batcher session shows `skipped`. */
export function skippedText(session: string): string {
  return (
    `Skipped means ${session} succeeded but Ansible recorded nothing for this node (no play in the layer targeted ` +
    "it: the playbook's hosts or groups leave it out), so the batcher marked the layer skipped and CFS counts it as " +
    'done although nothing was applied; if the layer should apply to this node, fix the play targeting, then clear ' +
    "the component's state (PATCH its state to []) so CFS lists it pending again."
  );
}
