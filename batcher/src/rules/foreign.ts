/**
 * Another batcher against the same CFS (pure): which `batcher-` sessions are not this process's, which components
 * they hold, and whether this batcher stands down.
 *
 * Foreign: a pending or running `batcher-` session that this process neither created (its names carry this
 * instance's id, see `sessionNameFor`) nor holds in its book (rebuilt, uncertain, planned), that was not already
 * there when it rebuilt at start, and whose start_time is not older than this process (less the skew allowance). A
 * restart is therefore never foreign: what the previous instance left is adopted or seen at rebuild, and its
 * in-flight creates come back as intents.
 *
 * Stand-down: while foreign sessions keep appearing (one seen within the quiet window), this batcher creates nothing
 * unless it wins the settlement with another copy of itself. Two copies compare instance ids, which both read from
 * the session names they see in CFS: the id starts with the process's start second, so the older copy wins (equal
 * seconds: the random part decides). A foreign session without a lower id (the original's names are random uuids)
 * is answered the same way, and a foreign batcher that keeps creating more than the yield grace after this one
 * started to win does not stand down (the original never does): this one yields to it.
 */
import { randomUUID } from 'node:crypto';
import type { CfsSession } from '@cfs-batcher/shared';
import { SESSION_PREFIX } from './session-status';

/** Start times are CFS's clock, read against ours: nodes synced by NTP, start_time truncated to the second. */
export const CLOCK_SKEW_MS = 30_000;
/** Sessions named in a WARNING or a /status line: enough to find them, short enough to read. */
export const NAMED_SESSIONS = 3;

/** The part of a session name that is the same for every session one process creates. */
const INSTANCE_ID = /^batcher-([0-9a-f]{8}-[0-9a-f]{4})-/;

/** `<start second, 8 hex>-<4 random hex>`: ordered by process age, so two copies agree on the elder. */
export function batcherInstanceId(startWallMs: number, random: () => string = randomUUID): string {
  const seconds = Math.floor(startWallMs / 1000) % 2 ** 32;
  return `${seconds.toString(16).padStart(8, '0')}-${random().slice(9, 13)}`;
}

/** `batcher-<uuid>` whose first two groups are the instance id (the rest random, in the uuid v4 layout). */
export function sessionNameFor(instanceId: string, random: () => string = randomUUID): string {
  return `${SESSION_PREFIX}${instanceId}${random().slice(13)}`;
}

export function instanceIdOf(name: string): string | null {
  return INSTANCE_ID.exec(name)?.[1] ?? null;
}

/** How old a copy of this batcher may plausibly be when it creates a session. */
const COPY_MAX_AGE_MS = 365 * 24 * 3600_000;

/**
 * Could `id` be a copy's instance id, given the session's start time? A copy starts before it creates. A random
 * uuid (the original's) passes only by chance (under 1 in 100): the rest are recognised at once as not a copy.
 */
export function copyLike(id: string, sessionStartMs: number): boolean {
  if (Number.isNaN(sessionStartMs)) return true;
  const started = parseInt(id.slice(0, 8), 16) * 1000;
  return started <= sessionStartMs + CLOCK_SKEW_MS && started >= sessionStartMs - COPY_MAX_AGE_MS;
}

/**
 * How long no new foreign session must appear before creating again: two of the original's send opportunities (a
 * partial batch goes once its window has passed, checked every interval), so a live original with any pending work
 * shows a session within it.
 */
export function quietWindowMs(o: { batch_window: number; batcher_check_interval: number }): number {
  return 2 * (o.batch_window + o.batcher_check_interval) * 1000;
}

/** Room for one long cycle of the other copy (collect and send at a large site) before its next look at CFS. */
const LONG_CYCLE_MS = 30_000;

/** A copy of this batcher stands down within its next cycle after seeing ours: beyond that it never will. */
export function yieldGraceMs(o: { batcher_check_interval: number }): number {
  return 3 * o.batcher_check_interval * 1000 + LONG_CYCLE_MS;
}

export interface ForeignSession {
  name: string;
  members: readonly string[];
  /** CFS's start_time, wall-clock epoch ms (NaN when unreadable). */
  startMs: number;
  /** Monotonic, when this batcher first saw it. */
  firstSeenAt: number;
}

export type YieldWhy = 'elder' | 'persists';

export interface ForeignState {
  /** This process's instance id, in every session name it creates. */
  readonly instanceId: string;
  /** Wall-clock epoch ms of this process's start. */
  readonly startWallMs: number;
  /** Names of incomplete `batcher-` sessions seen at rebuild: a previous instance's, never foreign. */
  readonly prior: Set<string>;
  /** Foreign sessions pending or running at the last look, by name. */
  active: Map<string, ForeignSession>;
  /** Component id -> the foreign session holding it (never put into a new session of ours). */
  holders: Map<string, string>;
  /** Monotonic: when a new foreign session was last seen (null: never). */
  lastNewAt: number | null;
  /** The names seen new most recently, for the WARNING and /status. */
  recent: string[];
  /** Standing down: why, since when (monotonic); null while creating. */
  standingDown: { why: YieldWhy; since: number } | null;
  /** Monotonic: since when this batcher wins against recent foreign sessions (null: not contested). */
  winningSince: number | null;
  /** A foreign batcher kept creating after this one won: it does not stand down (until the quiet window ends). */
  persists: boolean;
}

export function initialForeign(startWallMs: number): ForeignState {
  return {
    instanceId: batcherInstanceId(startWallMs),
    startWallMs,
    prior: new Set(),
    active: new Map(),
    holders: new Map(),
    lastNewAt: null,
    recent: [],
    standingDown: null,
    winningSince: null,
    persists: false,
  };
}

export interface ForeignInput {
  /** Names this batcher holds in its book (sessions, uncertain and planned names). */
  isOwn: (name: string) => boolean;
  /** Parses a session's start_time to wall-clock epoch ms (NaN when unreadable). */
  startOf: (s: CfsSession) => number;
  now: number;
  quietMs: number;
  graceMs: number;
}

export type ForeignChange = 'stood_down' | 'resumed' | 'seen' | null;

/** Is this listed session another batcher's? */
export function isForeign(s: CfsSession, st: ForeignState, i: ForeignInput): boolean {
  if (!s.name.startsWith(SESSION_PREFIX) || st.prior.has(s.name) || i.isOwn(s.name)) return false;
  if (instanceIdOf(s.name) === st.instanceId) return false;
  const started = i.startOf(s);
  // Unreadable start time: judged by the names alone (rebuild saw every session older than this process).
  return Number.isNaN(started) || started >= st.startWallMs - CLOCK_SKEW_MS;
}

/** CFS writes start_time in its local time without a zone (UTC in CSM's pods, as this one's). */
export function parseStartTime(text: string | null | undefined): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/.exec(text ?? '');
  if (!m) return NaN;
  return new Date(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!).getTime();
}

function membersOf(s: CfsSession): string[] {
  return (s.ansible?.limit ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

/**
 * One look at the pending and running `batcher-` sessions: updates the foreign sessions, their holds and the
 * stand-down decision; returns the change an SRE must hear about.
 */
export function observeForeign(st: ForeignState, listed: Iterable<CfsSession>, i: ForeignInput): ForeignChange {
  const active = new Map<string, ForeignSession>();
  const fresh: string[] = [];
  for (const s of listed) {
    if (!isForeign(s, st, i)) continue;
    const before = st.active.get(s.name);
    if (!before) fresh.push(s.name);
    active.set(s.name, {
      name: s.name,
      members: membersOf(s),
      startMs: i.startOf(s),
      firstSeenAt: before?.firstSeenAt ?? i.now,
    });
  }
  st.active = active;
  st.holders = new Map();
  for (const f of active.values()) for (const id of f.members) if (!st.holders.has(id)) st.holders.set(id, f.name);
  if (fresh.length > 0) {
    st.lastNewAt = i.now;
    st.recent = fresh.slice(0, NAMED_SESSIONS);
  }
  return decide(st, fresh, i);
}

/** Stand down or not, after a look that found `fresh` new foreign sessions. */
function decide(st: ForeignState, fresh: readonly string[], i: ForeignInput): ForeignChange {
  const contested = st.lastNewAt !== null && i.now - st.lastNewAt < i.quietMs;
  if (!contested) {
    const was = st.standingDown !== null;
    st.standingDown = null;
    st.winningSince = null;
    st.persists = false;
    return was ? 'resumed' : null;
  }
  // Standing down lasts until the quiet window has passed with nothing new, whatever ends meanwhile.
  if (st.standingDown !== null) return null;
  if (st.winningSince !== null && fresh.length > 0 && i.now - st.winningSince > i.graceMs) st.persists = true;
  const elder = [...st.active.values()].some((f) => {
    const id = instanceIdOf(f.name);
    return id === null || !copyLike(id, f.startMs) || id < st.instanceId;
  });
  const why: YieldWhy | null = st.persists ? 'persists' : elder ? 'elder' : null;
  if (why === null) {
    const first = st.winningSince === null;
    st.winningSince ??= i.now;
    return first ? 'seen' : null;
  }
  st.standingDown = { why, since: i.now };
  return 'stood_down';
}

/** One line naming a few foreign sessions (the WARNING, /status, explain). */
export function foreignSummary(st: ForeignState): string {
  const names = st.recent.length > 0 ? st.recent : [...st.active.keys()].slice(0, NAMED_SESSIONS);
  const more = st.active.size > names.length ? ` and ${st.active.size - names.length} more active` : '';
  return `${names.join(', ')}${more}`;
}

/** Why this batcher yields, in words. */
export function yieldText(why: YieldWhy): string {
  return why === 'persists'
    ? 'it kept creating after this batcher claimed creation, so it does not stand down (the original never does)'
    : 'it is the original batcher or an older copy of this one';
}
