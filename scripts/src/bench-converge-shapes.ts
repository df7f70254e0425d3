/**
 * The operator shapes of the convergence bench, and what is watched while one runs. Every shape starts sessions 1-2 s
 * after their create (the simulator's pendingMs + pendingJitterMs) unless it says otherwise:
 * - prompt: no limit on starts, batcher_pending_timeout 300 s;
 * - slow: at most 20 starts a second, pending timeout 60 s (an unpaced 50k backlog of 2000 sessions needs 100 s);
 * - stop: prompt, then the operator stops 5 s after the batcher's first create and resumes 40 s later;
 * - jump: prompt with a 60 s pending timeout, the start latency jumps to 20 s 5 s after the first create and comes back
 *   to 1-2 s 40 s later.
 * The watch samples the simulator's session count and the heartbeat's allowance every 200 ms, so the stop and jump
 * figures (creates after the stop, time to stop and to resume; the allowance at the jump, its low, its recovery) come
 * from the same run as the convergence time.
 */
import { hb } from './bench-observe';
import { httpJson } from './bench-procs';

/** Sessions stay running once started: nothing completes, so "every component in a session" stays true. */
const HELD_MS = 24 * 3600_000;
const PROMPT = { pendingMs: 1000, pendingJitterMs: 1000, runningMs: HELD_MS, maxStartsPerSecond: 0 };

type Mark = 'stop' | 'resume' | 'jump' | 'drop';
export interface OperatorShape {
  operator: typeof PROMPT;
  pendingTimeoutS: number;
  /** Operator commands (POST /__sim/operator) this long after the batcher's first session (the wave under way). */
  script: readonly { atMs: number; mark: Mark; body: Record<string, unknown> }[];
}

export const CONVERGE_OPERATORS: Record<'prompt' | 'slow' | 'stop' | 'jump', OperatorShape> = {
  prompt: { operator: PROMPT, pendingTimeoutS: 300, script: [] },
  slow: { operator: { ...PROMPT, maxStartsPerSecond: 20 }, pendingTimeoutS: 60, script: [] },
  stop: {
    operator: PROMPT,
    pendingTimeoutS: 300,
    script: [
      { atMs: 5000, mark: 'stop', body: { pause: true } },
      { atMs: 45_000, mark: 'resume', body: { pause: false } },
    ],
  },
  jump: {
    operator: PROMPT,
    pendingTimeoutS: 60,
    script: [
      { atMs: 5000, mark: 'jump', body: { pendingMs: 20_000 } },
      { atMs: 45_000, mark: 'drop', body: { pendingMs: 1000 } },
    ],
  },
};

export type ConvergeOperator = keyof typeof CONVERGE_OPERATORS;

/** What the watch saw; null where the shape has no such mark or it never happened. */
export interface ShapeFigures {
  allowancePeak: number | null;
  /** stop: sessions created between the stop and the resume; seconds from the stop to the last of them. */
  createdWhileStopped: number | null;
  stoppedAfterS: number | null;
  /** stop: seconds from the resume to the next create. */
  resumedAfterS: number | null;
  /** jump: the allowance when the latency jumped, its lowest until it came down, seconds until back to that level. */
  allowanceAtJump: number | null;
  allowanceLowInJump: number | null;
  recoveredAfterS: number | null;
}

interface Sample {
  t: number;
  sessions: number;
  allowance: number | null;
}

/** Runs the shape's script and samples; `stop()` ends both and returns the figures. */
export function watchShape(shape: OperatorShape, origin: string, hbFile: string, t0: number) {
  const samples: Sample[] = [];
  const marks = new Map<Mark, number>();
  let timers: NodeJS.Timeout[] = [];
  const arm = (first: number): void => {
    timers = shape.script.map((s) =>
      setTimeout(
        () => void httpJson('POST', `${origin}/__sim/operator`, s.body).then(() => marks.set(s.mark, Date.now() - t0)),
        Math.max(0, first + s.atMs - Date.now()),
      ),
    );
  };
  let on = true;
  let armed = false;
  const loop = (async () => {
    while (on) {
      try {
        const sum = (await httpJson('GET', `${origin}/__sim/sessions-summary`)).json as { sessions: number };
        const h = await hb(hbFile);
        samples.push({ t: Date.now() - t0, sessions: sum.sessions, allowance: h?.pacing?.pending_cap ?? null });
        if (sum.sessions > 0 && !armed) {
          armed = true;
          arm(Date.now());
        }
      } catch {
        // the simulator is being stopped
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async stop(): Promise<ShapeFigures> {
      on = false;
      for (const t of timers) clearTimeout(t);
      await loop;
      return figures(samples, marks);
    },
  };
}

function figures(samples: readonly Sample[], marks: ReadonlyMap<Mark, number>): ShapeFigures {
  const at = (t: number): Sample | undefined => samples.find((s) => s.t >= t);
  const allowances = samples.map((s) => s.allowance).filter((a): a is number => a !== null);
  const f: ShapeFigures = {
    allowancePeak: allowances.length > 0 ? Math.max(...allowances) : null,
    createdWhileStopped: null,
    stoppedAfterS: null,
    resumedAfterS: null,
    allowanceAtJump: null,
    allowanceLowInJump: null,
    recoveredAfterS: null,
  };
  const stop = marks.get('stop');
  const resume = marks.get('resume');
  if (stop !== undefined && resume !== undefined) {
    const during = samples.filter((s) => s.t >= stop && s.t < resume);
    const first = during[0]?.sessions ?? 0;
    const last = during.at(-1)?.sessions ?? first;
    f.createdWhileStopped = last - first;
    const lastCreate = [...during].reverse().find((s) => s.sessions < last);
    const stoppedAt = during.find(
      (s, i) => i > 0 && s.sessions === last && (lastCreate === undefined || s.t > lastCreate.t),
    );
    f.stoppedAfterS = stoppedAt === undefined ? 0 : (stoppedAt.t - stop) / 1000;
    const next = samples.find((s) => s.t >= resume && s.sessions > last);
    f.resumedAfterS = next === undefined ? null : (next.t - resume) / 1000;
  }
  const jump = marks.get('jump');
  const drop = marks.get('drop');
  if (jump !== undefined && drop !== undefined) {
    const level = at(jump)?.allowance ?? null;
    f.allowanceAtJump = level;
    const inJump = samples.filter((s) => s.t >= jump && s.t < drop && s.allowance !== null).map((s) => s.allowance!);
    f.allowanceLowInJump = inJump.length > 0 ? Math.min(...inJump) : null;
    const back = level === null ? undefined : samples.find((s) => s.t >= drop && (s.allowance ?? -1) >= level);
    f.recoveredAfterS = back === undefined ? null : (back.t - drop) / 1000;
  }
  return f;
}
