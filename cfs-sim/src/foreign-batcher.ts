/**
 * A scripted "other batcher" inside the simulator, creating `batcher-<uuid4>` sessions the way the original batcher
 * does: every interval it files the enabled pending components that none of its own batches holds into batches per
 * configuration, sends every full batch at once and a partial one once its window has passed, and releases a
 * batch's members when its session ends. It knows only its own sessions (as the original does), so it never
 * stands down and ignores everyone else's. Off unless a scenario (`foreignBatcher`) or POST
 * /__sim/foreign-batcher turns it on.
 */
import { randomUUID } from 'node:crypto';
import type { SimOperator } from './operator';
import { createSession } from './sessions';
import type { SimState } from './state';
import { computeStatus } from './status';

export interface ForeignBatcherSettings {
  running: boolean;
  /** The original's batcher_check_interval. */
  intervalMs: number;
  batchSize: number;
  /** The original's batch_window. */
  windowMs: number;
}

export const FOREIGN_DEFAULTS: ForeignBatcherSettings = {
  running: false,
  intervalMs: 10_000,
  batchSize: 25,
  windowMs: 60_000,
};

interface Batch {
  config: string;
  members: string[];
  openedAt: number;
  session: string | null;
}

export class ForeignBatcher {
  settings: ForeignBatcherSettings = { ...FOREIGN_DEFAULTS };
  /** Every session it created, oldest first. */
  readonly created: string[] = [];
  private batches: Batch[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly state: SimState,
    private readonly operator: SimOperator,
    private readonly now: () => number,
  ) {}

  configure(s: Partial<ForeignBatcherSettings>): void {
    const restart = s.intervalMs !== undefined && s.intervalMs !== this.settings.intervalMs;
    this.settings = { ...this.settings, ...s };
    if (!this.settings.running) this.stopTimer();
    else if (restart || this.timer === null) this.startTimer();
  }

  stop(): void {
    this.stopTimer();
  }

  private startTimer(): void {
    this.stopTimer();
    this.timer = setInterval(() => this.cycle(), this.settings.intervalMs);
    this.timer.unref();
    this.cycle();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One of the original's loops: release ended sessions, file pending components, send what is ready. */
  cycle(): void {
    const now = this.now();
    this.batches = this.batches.filter((b) => {
      if (b.session === null) return true;
      const s = this.state.sessions.get(b.session);
      return s !== undefined && s.status.session.status !== 'complete';
    });
    const held = new Set(this.batches.flatMap((b) => b.members));
    const opts = this.state.effectiveOptions();
    for (const c of this.state.components.values()) {
      if (c.enabled === false || held.has(c.id) || c.desired_config === undefined || c.desired_config === '') continue;
      const config = this.state.configurations.get(c.desired_config);
      if (computeStatus(c, config, opts).status !== 'pending') continue;
      let b = this.batches.find(
        (x) => x.session === null && x.config === c.desired_config && x.members.length < this.settings.batchSize,
      );
      if (!b) {
        b = { config: c.desired_config, members: [], openedAt: now, session: null };
        this.batches.push(b);
      }
      b.members.push(c.id);
    }
    for (const b of this.batches) {
      if (b.session !== null) continue;
      if (b.members.length < this.settings.batchSize && now - b.openedAt <= this.settings.windowMs) continue;
      const name = `batcher-${randomUUID()}`;
      const s = createSession(
        this.state,
        { name, configuration_name: b.config, configuration_limit: '', ansible_limit: b.members.join(',') },
        now,
      );
      this.operator.onCreated(s, {});
      b.session = name;
      this.created.push(name);
    }
  }
}
