/**
 * The create-intents file: before each chunk of creates a send phase POSTs, the names about to be POSTed (and every
 * name still uncertain) are written here, atomically, once per chunk. It lives next to the heartbeat because that
 * volume survives container restarts: a restarted instance holds the members of its predecessor's in-flight creates
 * until their names resolve (rules/create-intents.ts), so a POST that commits after the crash cannot be duplicated.
 *
 * The store owns what follows from the file: the hold on creates after an unusable one (`heldUntil`, read by send,
 * the heartbeat and explain), and the logging of its failures (once per distinct reason, and when they end).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage, writeFileAtomic } from '@cfs-batcher/shared';
import { logMain, logSessions } from './log';
import {
  INTENTS_FILE,
  parseIntents,
  serializeIntents,
  type CreateIntent,
  type IntentsParse,
} from './rules/create-intents';

/** The intents file beside a heartbeat file (undefined: memory only, e.g. tests without a volume). */
export function intentsPathFor(heartbeatPath: string | undefined): string | undefined {
  return heartbeatPath === undefined ? undefined : path.join(path.dirname(heartbeatPath), INTENTS_FILE);
}

export class CreateIntentStore {
  private held = 0;
  /** The intents in the file as last written or read (serialized, to compare a new plan with). */
  private recorded = '[]';
  /** Why the last write failed ('' after a success): an ERROR is logged once per distinct reason. */
  private writeProblem = '';

  constructor(readonly path: string | undefined) {}

  /** Creates are held back until this time (monotonic; 0: never held), after an unusable file at start. */
  get heldUntil(): number {
    return this.held;
  }

  /**
   * The previous instance's intents (none on a first start). An unusable file holds every create back until
   * `now + horizonMs` rather than risk duplicating a create that cannot be known, and is set aside (kept for
   * inspection): a restart during the hold must not find it again and hold forever.
   */
  async restore(now: number, horizonMs: number): Promise<CreateIntent[]> {
    const loaded = await this.load();
    if (loaded.ok) return loaded.intents;
    this.held = now + horizonMs;
    const aside = await this.setAside();
    logMain.error(
      `Create intents file ${this.path} is unusable: ${loaded.problem}; holding back session creation for ${Math.round(horizonMs / 1000)} seconds so a create in flight before the restart cannot be duplicated${aside ? `; the file is kept as ${aside}` : ''}`,
    );
    return [];
  }

  /**
   * Makes the file say `intents` (skipped when it already does); false when it cannot be written. The first failure
   * for a reason is an ERROR, its end an INFO.
   */
  async record(intents: readonly CreateIntent[], nowMs: number): Promise<boolean> {
    if (this.holds(intents)) return true;
    const w = await this.write(intents, nowMs);
    if (w.ok) {
      if (this.writeProblem !== '') logSessions.info(`Create intents are recorded in ${this.path} again`);
      this.writeProblem = '';
      return true;
    }
    if (this.writeProblem !== w.problem) {
      logSessions.error(
        `Unable to record session create intents in ${this.path}: ${w.problem}; creating no session until it can be written`,
      );
    }
    this.writeProblem = w.problem;
    return false;
  }

  /** Reads the file left by a previous instance; a missing file is an empty one (first start). */
  private async load(): Promise<IntentsParse> {
    if (this.path === undefined) return { ok: true, intents: [] };
    let text: string;
    try {
      text = await fs.readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, intents: [] };
      return { ok: false, problem: `cannot read it (${errorMessage(err)})` };
    }
    const parsed = parseIntents(text);
    if (parsed.ok) this.recorded = JSON.stringify(parsed.intents);
    return parsed;
  }

  /** Moves an unusable file aside (`.unusable`); the new name, or null when it could not be moved. */
  private async setAside(): Promise<string | null> {
    if (this.path === undefined) return null;
    const aside = `${this.path}.unusable`;
    try {
      await fs.rename(this.path, aside);
      return aside;
    } catch {
      return null;
    }
  }

  /** Does the file say exactly this already? */
  private holds(intents: readonly CreateIntent[]): boolean {
    return JSON.stringify(intents) === this.recorded;
  }

  /** Replaces the file atomically (writeFileAtomic); true when durable. A failure leaves the old file in place. */
  private async write(
    intents: readonly CreateIntent[],
    nowMs: number,
  ): Promise<{ ok: true } | { ok: false; problem: string }> {
    if (this.path === undefined) {
      this.recorded = JSON.stringify(intents);
      return { ok: true };
    }
    try {
      await writeFileAtomic(this.path, serializeIntents(intents, nowMs));
    } catch (err) {
      return { ok: false, problem: errorMessage(err) };
    }
    this.recorded = JSON.stringify(intents);
    return { ok: true };
  }
}
