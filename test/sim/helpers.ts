import { setLogSilent } from '@cfs-batcher/shared';
import { createSimulator, type Simulator, type SimulatorOptions } from '@cfs-batcher/cfs-sim';

setLogSilent(true);

export const REPO_A = 'https://api-gw-service-nmn.local/vcs/cray/cos-config-management.git';
export const REPO_B = 'https://api-gw-service-nmn.local/vcs/cray/uss-config-management.git';
export const SHA_A = 'a'.repeat(40);
export const SHA_B = 'b'.repeat(40);

/** A paused simulator (no timers) with one two-layer configuration `cfg`. */
export function makeSim(opts: SimulatorOptions = {}): Simulator {
  const sim = createSimulator({ operator: { paused: true }, ...opts });
  sim.state.putConfiguration({
    name: 'cfg',
    layers: [
      { name: 'cos', clone_url: REPO_A, commit: SHA_A, playbook: 'site.yml' },
      { name: 'uss', clone_url: REPO_B, commit: SHA_B, playbook: 'uss.yml' },
    ],
  });
  return sim;
}

export function addComponent(sim: Simulator, id: string, extra: Record<string, unknown> = {}): void {
  sim.state.putComponent({ id, desired_config: 'cfg', enabled: true, error_count: 0, state: [], tags: {}, ...extra });
}

/** Polls `cond` until true or the deadline passes (bounded in time and count). */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5000, stepMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < Math.ceil(timeoutMs / stepMs) + 1; i++) {
    if (await cond()) return;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}
