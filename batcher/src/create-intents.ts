/**
 * The create-intents file: before each chunk of creates a send phase POSTs, the names about to be POSTed (and every
 * name still uncertain) are written here, atomically, once per chunk. It lives next to the heartbeat because that
 * volume survives container restarts: a restarted instance holds the members of its predecessor's in-flight creates
 * until their names resolve (rules/create-intents.ts), so a POST that commits after the crash cannot be duplicated.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorMessage, writeFileAtomic } from '@cfs-batcher/shared';
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
  /** Creates are held back until this clock time (set when the file could not be read at start). */
  holdUntil = 0;
  /** The intents in the file as last written or read (serialized, to compare a new plan with). */
  private recorded = '[]';
  /** Why the last write failed ('' after a success): an ERROR is logged once per distinct reason. */
  lastWriteProblem = '';

  constructor(readonly path: string | undefined) {}

  /** Reads the file left by a previous instance; a missing file is an empty one (first start). */
  async load(): Promise<IntentsParse> {
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
  async setAside(): Promise<string | null> {
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
  holds(intents: readonly CreateIntent[]): boolean {
    return JSON.stringify(intents) === this.recorded;
  }

  /** Replaces the file atomically (writeFileAtomic); ok when durable. A failure leaves the old file in place. */
  async write(intents: readonly CreateIntent[], nowMs: number): Promise<{ ok: true } | { ok: false; problem: string }> {
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
