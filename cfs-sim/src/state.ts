/**
 * The simulator's in-memory database: components, configurations, sessions, options. Keys are kept sorted
 * (SortedKeys) so list requests page with a binary search, never a re-sort. Tests seed and inspect it directly.
 */
import { SortedKeys } from './sorted-keys';
import type { Component, Configuration, Options, Session } from './types';

/** Filled in on every options read when unset, as the real server does. The batcher's own options are NOT here. */
export const SERVER_OPTION_DEFAULTS: Readonly<Options> = {
  default_playbook: 'site.yml',
  default_ansible_config: 'cfs-default-ansible-cfg',
  logging_level: 'INFO',
  default_page_size: 1000,
  include_ara_links: true,
};

export class SimState {
  readonly components = new Map<string, Component>();
  readonly componentKeys = new SortedKeys();
  readonly configurations = new Map<string, Configuration>();
  readonly configurationKeys = new SortedKeys();
  readonly sessions = new Map<string, Session>();
  readonly sessionKeys = new SortedKeys();
  /** Stored options (without server defaults). */
  options: Options = {};
  health = { db_status: 'ok', kafka_status: 'ok' };

  /** Options as a read returns them: stored values over the server defaults. */
  effectiveOptions(): Options {
    return { ...SERVER_OPTION_DEFAULTS, ...this.options };
  }

  putComponent(c: Component): void {
    if (!this.components.has(c.id)) this.componentKeys.insert(c.id);
    this.components.set(c.id, c);
  }

  /** Bulk seeding (generator, scenario): one sort for the whole set. */
  putComponents(list: Component[]): void {
    const fresh: string[] = [];
    for (const c of list) {
      if (!this.components.has(c.id)) fresh.push(c.id);
      this.components.set(c.id, c);
    }
    if (fresh.length > 64) this.componentKeys.load(fresh);
    else for (const id of fresh) this.componentKeys.insert(id);
  }

  deleteComponent(id: string): boolean {
    if (!this.components.delete(id)) return false;
    this.componentKeys.remove(id);
    return true;
  }

  putConfiguration(c: Configuration): void {
    if (!this.configurations.has(c.name)) this.configurationKeys.insert(c.name);
    this.configurations.set(c.name, c);
  }

  deleteConfiguration(name: string): boolean {
    if (!this.configurations.delete(name)) return false;
    this.configurationKeys.remove(name);
    return true;
  }

  putSession(s: Session): void {
    if (!this.sessions.has(s.name)) this.sessionKeys.insert(s.name);
    this.sessions.set(s.name, s);
  }

  deleteSession(name: string): boolean {
    if (!this.sessions.delete(name)) return false;
    this.sessionKeys.remove(name);
    return true;
  }

  clear(): void {
    this.components.clear();
    this.componentKeys.clear();
    this.configurations.clear();
    this.configurationKeys.clear();
    this.sessions.clear();
    this.sessionKeys.clear();
    this.options = {};
  }
}
