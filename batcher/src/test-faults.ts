/**
 * Faults for the e2e suite only (test/e2e): they make this process hang its event loop, stop sending sessions while
 * still looping, throw, reject or run out of memory, so the suite can prove the sidecar and the kubelet catch each.
 *
 * Inert unless NODE_ENV is exactly "test" AND one of the variables below is set; a production pod sets neither
 * (NODE_ENV=test in a pod would be a mistake that this module announces at WARNING on start-up).
 * - BATCHER_TEST_FAULT=<fault>: fires at the start of each cycle from cycle BATCHER_TEST_FAULT_AFTER_CYCLES (default 1).
 * - BATCHER_TEST_FAULT_FILE=<path>: the file's content names the fault; checked at each cycle start. One-shot faults
 *   (everything but never-send) delete the file before firing, so the restarted process runs clean.
 * Faults: busy-loop | never-send | throw | reject | oom.
 */
import { readFileSync, rmSync } from 'node:fs';
import { getLogger } from '@cfs-batcher/shared';

export const TEST_FAULTS = ['busy-loop', 'never-send', 'throw', 'reject', 'oom'] as const;
export type TestFault = (typeof TEST_FAULTS)[number];

export interface TestFaults {
  /** Called at the start of every cycle with the number of cycles completed so far. */
  beforeCycle(cyclesDone: number): void;
  /** True while a never-send fault is in force: the loop runs but skips its send phase. */
  sendSuppressed(): boolean;
}

const INERT: TestFaults = { beforeCycle: () => undefined, sendSuppressed: () => false };
const log = getLogger('batcher.test-faults');
/** Retained by the oom fault so the collector cannot free it. */
const hog: number[][] = [];

function isFault(s: string): s is TestFault {
  return (TEST_FAULTS as readonly string[]).includes(s);
}

function fire(fault: Exclude<TestFault, 'never-send'>): void {
  log.warn(`TEST FAULT ${fault} firing`);
  switch (fault) {
    case 'busy-loop': {
      // Blocks the event loop: no heartbeat, no timers, no signal handlers. Bounded so a leaked process ends.
      const until = Date.now() + 10 * 60_000;
      while (Date.now() < until) {
        /* spin */
      }
      return;
    }
    case 'throw':
      setImmediate(() => {
        throw new Error('TEST FAULT: uncaught exception');
      });
      return;
    case 'reject':
      void Promise.reject(new Error('TEST FAULT: unhandled rejection'));
      return;
    case 'oom':
      for (let i = 0; i < 1_000_000; i++) hog.push(new Array<number>(1 << 20).fill(i));
      return;
  }
}

export function testFaultsFromEnv(env: NodeJS.ProcessEnv = process.env): TestFaults {
  const named = env.BATCHER_TEST_FAULT;
  const file = env.BATCHER_TEST_FAULT_FILE;
  if (named === undefined && file === undefined) return INERT;
  if (env.NODE_ENV !== 'test') {
    log.warn('BATCHER_TEST_FAULT* is set but NODE_ENV is not "test": test faults stay off');
    return INERT;
  }
  if (named !== undefined && !isFault(named)) {
    log.warn(`BATCHER_TEST_FAULT="${named}" is not one of ${TEST_FAULTS.join(', ')}; ignored`);
  }
  const after = Number(env.BATCHER_TEST_FAULT_AFTER_CYCLES ?? '1');
  log.warn(`TEST FAULTS ARMED (NODE_ENV=test): ${named ? `fault ${named} after ${after} cycles` : ''}${file ? ` trigger file ${file}` : ''}`);

  const fromFile = (): TestFault | null => {
    if (!file) return null;
    let text: string;
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      return null;
    }
    if (!isFault(text)) {
      log.warn(`test fault file names "${text.slice(0, 40)}", not one of ${TEST_FAULTS.join(', ')}; ignored`);
      return null;
    }
    return text;
  };
  const current = (cyclesDone: number): TestFault | null => {
    const f = fromFile();
    if (f) return f;
    return named && isFault(named) && cyclesDone >= after ? named : null;
  };
  let cycles = 0;
  return {
    beforeCycle(cyclesDone) {
      cycles = cyclesDone;
      const f = current(cyclesDone);
      if (f === null || f === 'never-send') return;
      if (file && fromFile() === f) rmSync(file, { force: true });
      fire(f);
    },
    sendSuppressed: () => current(cycles) === 'never-send',
  };
}
