/** Synthetic inventories: N pending components spread over K configurations (1k/10k/50k for scale tests). */
import { createHash } from 'node:crypto';
import type { Component, Configuration } from './types';

export interface GenerateOptions {
  components: number;
  configurations?: number;
  layersPerConfiguration?: number;
  /** Fraction (0..1) of components given a bos_session tag (one tag value per 100 components). */
  taggedFraction?: number;
  /** Prefix of configuration names. */
  configPrefix?: string;
  enabled?: boolean;
}

export interface Inventory {
  components: Component[];
  configurations: Configuration[];
}

const REPOS = [
  'cos-config-management',
  'uss-config-management',
  'slingshot-host-software',
  'sma-config-management',
  'csm-config-management',
];

function sha(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** x-names in cabinet/chassis/slot/bmc/node order: 256 nodes per cabinet, starting at x1000. */
export function xname(i: number): string {
  const node = i % 2;
  const bmc = Math.floor(i / 2) % 2;
  const slot = Math.floor(i / 4) % 8;
  const chassis = Math.floor(i / 32) % 8;
  const cabinet = 1000 + Math.floor(i / 256);
  return `x${cabinet}c${chassis}s${slot}b${bmc}n${node}`;
}

export function generateConfigurations(count: number, layers: number, prefix = 'compute'): Configuration[] {
  const out: Configuration[] = [];
  for (let c = 0; c < count; c++) {
    const name = `${prefix}-${23 + c}.7`;
    out.push({
      name,
      last_updated: '2024-01-10T13:37:52Z',
      layers: Array.from({ length: layers }, (_, l) => {
        const repo = REPOS[l % REPOS.length] as string;
        return {
          name: repo.split('-')[0],
          clone_url: `https://api-gw-service-nmn.local/vcs/cray/${repo}.git`,
          commit: sha(`${name}/${repo}`),
          playbook: 'site.yml',
        };
      }),
    });
  }
  return out;
}

export function generateInventory(opts: GenerateOptions): Inventory {
  const configurations = generateConfigurations(
    opts.configurations ?? 3,
    opts.layersPerConfiguration ?? 2,
    opts.configPrefix,
  );
  const tagged = Math.round((opts.taggedFraction ?? 0) * 100);
  const components: Component[] = [];
  for (let i = 0; i < opts.components; i++) {
    const c: Component = {
      id: xname(i),
      desired_config: (configurations[i % configurations.length] as Configuration).name,
      enabled: opts.enabled ?? true,
      error_count: 0,
      state: [],
      tags: {},
    };
    if (i % 100 < tagged) c.tags = { bos_session: `bos-${Math.floor(i / 100)}` };
    components.push(c);
  }
  return { components, configurations };
}
