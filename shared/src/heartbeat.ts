/**
 * The heartbeat protocol between the batcher (writer) and the health sidecar (reader).
 *
 * The batcher's main loop writes this file at the start, at every phase change and at the end of each cycle, and
 * its waiting loops (CFS unavailable, backoff) stamp it while they wait. Nothing writes it from a timer: when the
 * loop stops, the file stops changing, and `sequence` stops advancing.
 *
 * Times are epoch milliseconds: both containers share the node's clock.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from './atomic-file';
import { formatZodIssues } from './contract';

export const HEARTBEAT_FORMAT = 1;
/** A heartbeat is a few hundred bytes; anything far larger is not ours and is not parsed. */
export const HEARTBEAT_MAX_BYTES = 64 * 1024;
export const DEFAULT_HEARTBEAT_PATH = '/var/run/cfs-batcher/heartbeat.json';

/**
 * The phase names a heartbeat can report. The batcher runs the CFS phases (rebuild .. send) as the steps listed in
 * `PHASE_STEPS` (batcher/src/phases/index.ts); its loop (batcher/src/loop.ts) stamps the others.
 */
export const HEARTBEAT_PHASES = [
  'starting', // process start, before the first CFS call
  'rebuild', // rebuilding state from incomplete batcher sessions
  'options', // GET/PATCH /v3/options
  'check_status', // following active sessions
  'collect', // paging pending components into batches
  'send', // creating sessions for ready batches
  'sleep', // between cycles (batcher_check_interval)
  'waiting_for_cfs', // CFS unreachable or answering errors: retrying with backoff (a dependency wait)
  'backoff', // session creation halted after 20 failed sessions (a dependency wait)
  'standing_down', // between cycles while another batcher creates sessions (a wait a restart cannot end)
  'stopping', // SIGTERM received
] as const;
export type Phase = (typeof HEARTBEAT_PHASES)[number];

/** Phases in which the batcher waits on something a restart cannot fix; they keep stamping the heartbeat. */
export const WAIT_PHASES: ReadonlySet<Phase> = new Set<Phase>(['waiting_for_cfs', 'backoff', 'standing_down']);

/** `creating.state`: the sidecar reads every state but ok/idle as "CFS trouble or a deliberate hold". */
export const CREATING_STATES = [
  'ok',
  'idle',
  'cfs_refusing',
  'cfs_timeout',
  'uncertain',
  'backoff',
  'paced',
  'disabled',
  'standing_down',
] as const;
export type CreatingState = (typeof CREATING_STATES)[number];

const epochMs = z.number().int().nonnegative();

/** The heartbeat's schema: the one definition of the file's shape, for the writer's type and the reader's check. */
/** Why the pending-sessions allowance has its value (batcher/src/rules/allowance.ts). */
export const ALLOWANCE_WHY = ['start', 'grown', 'ceiling', 'holding', 'halved', 'floor'] as const;
export type AllowanceWhy = (typeof ALLOWANCE_WHY)[number];

export const heartbeatSchema = z.object({
  format: z.literal(HEARTBEAT_FORMAT),
  instance_id: z.string().min(1),
  pid: z.number().int().positive(),
  started_at_ms: epochMs,
  written_at_ms: epochMs,
  /** Advances on every write. A file rewritten with the same sequence is not progress. */
  sequence: z.number().int().nonnegative(),
  /** Cycles completed by this instance. */
  cycle: z.number().int().nonnegative(),
  phase: z.enum(HEARTBEAT_PHASES),
  phase_started_at_ms: epochMs,
  /** True when the current phase is a dependency wait (see WAIT_PHASES). */
  phase_is_wait: z.boolean(),
  last_cycle: z
    .object({
      completed_at_ms: epochMs,
      duration_ms: z.number().nonnegative(),
      outcome: z.enum(['ok', 'error']),
      error: z.string().optional(),
    })
    .nullable(),
  /** The options in force (live values read from CFS). */
  options: z.object({
    batcher_check_interval: z.number().int().positive(),
    batch_window: z.number().int().nonnegative(),
    batch_size: z.number().int().positive(),
    batcher_pending_timeout: z.number().int().positive(),
  }),
  disabled: z.boolean(),
  backoff: z.object({
    active: z.boolean(),
    seconds: z.number().nonnegative(),
    until_ms: epochMs.nullable(),
  }),
  cfs: z.object({
    last_success_ms: epochMs.nullable(),
    last_error: z.object({ at_ms: epochMs, kind: z.string(), message: z.string() }).nullable(),
    /** The call failing longest that is being retried now (optional: an older writer omits it). */
    retrying: z
      .object({
        method: z.string(),
        route: z.string(),
        /** The last failed attempt's answer: `503`, `timeout`, `ECONNREFUSED`. */
        answer: z.string(),
        attempts: z.number().int().nonnegative(),
        since_ms: epochMs,
        until_ms: epochMs,
      })
      .nullable()
      .optional(),
  }),
  counters: z.object({
    pending_seen: z.number().int().nonnegative(),
    batches_queued: z.number().int().nonnegative(),
    batches_active: z.number().int().nonnegative(),
    sessions_created_total: z.number().int().nonnegative(),
    last_session_created_ms: epochMs.nullable(),
  }),
  // The fields below are optional (added in format 1): an older writer omits them and the sidecar reads "unknown".
  /** Why the batcher is or is not creating sessions, and when it tries next. */
  creating: z
    .object({
      state: z.enum(CREATING_STATES),
      /** One human line, e.g. "POST /v3/sessions answered 500 (3 times)". */
      reason: z.string(),
      /** When the next create (or completion PATCH retry) will be tried. */
      next_attempt_ms: epochMs.nullable(),
      /** Last create, lookup or completion PATCH attempt, whatever its result. */
      last_attempt_ms: epochMs.nullable(),
      /** Start of the current run of CFS errors on creates/lookups/PATCHes; null when the last try succeeded. */
      cfs_trouble_since_ms: epochMs.nullable(),
    })
    .optional(),
  /**
   * Operator-aware pacing: batcher sessions still pending in CFS, the allowance in force (`pending_cap`, 0 = off) and
   * the creates-per-minute guard; `allowance` says why the allowance has its value (optional: older writers omit it).
   */
  pacing: z
    .object({
      pending_sessions: z.number().int().nonnegative(),
      pending_cap: z.number().int().nonnegative(),
      creates_per_minute_cap: z.number().int().nonnegative(),
      allowance: z
        .object({
          why: z.enum(ALLOWANCE_WHY),
          reason: z.string(),
          ceiling: z.number().int().nonnegative(),
          /** How long the last session seen starting waited in pending. */
          last_start_s: z.number().nonnegative().nullable(),
          /** How long the oldest of the batcher's sessions still pending has waited. */
          oldest_pending_s: z.number().nonnegative().nullable(),
        })
        .nullable()
        .optional(),
    })
    .optional(),
  /** The last time any CFS call got an answer (good or bad, timeouts included): a phase getting answers is not stuck. */
  progress: z.object({ last_cfs_answer_ms: epochMs.nullable() }).optional(),
  /** Components whose completion PATCH failed and is queued for retry (their batch stays held). */
  completions_unwritten: z.number().int().nonnegative().optional(),
});

export type Heartbeat = z.infer<typeof heartbeatSchema>;

export function newInstanceId(): string {
  return randomUUID();
}

/** Writes the heartbeat atomically (atomic-file.ts): the sidecar never reads half a heartbeat. */
export async function writeHeartbeat(filePath: string, hb: Heartbeat): Promise<void> {
  await writeFileAtomic(filePath, JSON.stringify(hb));
}

export type HeartbeatReadResult =
  | { ok: true; heartbeat: Heartbeat; mtimeMs: number; bytes: number }
  | { ok: false; reason: 'missing' | 'unreadable' | 'oversized' | 'empty' | 'not_json' | 'invalid'; detail: string };

/** Pure: validates heartbeat text. Every rejection says what was wrong. */
export function parseHeartbeat(
  text: string,
): { ok: true; heartbeat: Heartbeat } | { ok: false; reason: 'empty' | 'not_json' | 'invalid'; detail: string } {
  if (text.trim() === '') return { ok: false, reason: 'empty', detail: 'heartbeat file is empty' };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: 'not_json', detail: `heartbeat is not JSON (${(err as Error).message})` };
  }
  const parsed = heartbeatSchema.safeParse(data);
  if (!parsed.success) {
    const issues = formatZodIssues(parsed.error, { max: 5 });
    return { ok: false, reason: 'invalid', detail: `heartbeat does not match format ${HEARTBEAT_FORMAT}: ${issues}` };
  }
  return { ok: true, heartbeat: parsed.data };
}

/** Reads and validates the heartbeat file, never throwing. Refuses files over HEARTBEAT_MAX_BYTES without reading them. */
export async function readHeartbeat(filePath: string): Promise<HeartbeatReadResult> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(filePath, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, reason: 'missing', detail: `no heartbeat file at ${filePath}` };
    return { ok: false, reason: 'unreadable', detail: `cannot open ${filePath}: ${(err as Error).message}` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, reason: 'unreadable', detail: `${filePath} is not a regular file` };
    if (stat.size > HEARTBEAT_MAX_BYTES) {
      return {
        ok: false,
        reason: 'oversized',
        detail: `heartbeat is ${stat.size} bytes (limit ${HEARTBEAT_MAX_BYTES})`,
      };
    }
    const buf = Buffer.alloc(HEARTBEAT_MAX_BYTES + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > HEARTBEAT_MAX_BYTES) {
      return { ok: false, reason: 'oversized', detail: `heartbeat grew past ${HEARTBEAT_MAX_BYTES} bytes while read` };
    }
    const parsed = parseHeartbeat(buf.subarray(0, bytesRead).toString('utf8'));
    if (!parsed.ok) return parsed;
    return { ok: true, heartbeat: parsed.heartbeat, mtimeMs: stat.mtimeMs, bytes: bytesRead };
  } catch (err) {
    return { ok: false, reason: 'unreadable', detail: `cannot read ${filePath}: ${(err as Error).message}` };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
