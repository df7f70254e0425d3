/**
 * The runtime's floor: peak RSS of node itself and of the least program that does the batcher's reading
 * (floor-child.ts), with the batcher's node flags, NODE_OPTIONS and runtime env, against the simulator with N pending
 * components. What the batcher spends above it is its own; what the floor spends no Node program can avoid.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startNode, startSim } from './bench-procs';
import type { Proc } from './proc';

export interface FloorRun {
  n: number;
  /** `node` with the flags, loading nothing. */
  bareMb: number;
  /** Reading and holding N records over node:http. */
  readMb: number;
}

export interface FloorOptions {
  nodeOptions: string;
  runtimeEnv: Record<string, string>;
  nodeFlags: string[];
  /** Records per page (CFS's default 1000 is what the batcher asks). */
  pageSize?: number;
}

async function childPeak(args: string[], o: FloorOptions): Promise<{ peakMb: number; held: number }> {
  const env = { ...o.runtimeEnv, NODE_OPTIONS: o.nodeOptions };
  const child = startNode('scripts/dist/floor-child.js', args, env, o.nodeFlags);
  const exit = await child.waitForExit(300_000).catch(async (err: unknown) => {
    await child.stop();
    throw err;
  });
  const line = child.lines.find((l) => typeof l.json?.peakMb === 'number');
  if (exit.code !== 0 || !line) throw new Error(`floor child (${args[0]}) failed: ${child.tail(5)}`);
  return { peakMb: Number(line.json?.peakMb), held: Number(line.json?.held) };
}

export async function runFloorBench(n: number, o: FloorOptions): Promise<FloorRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-floor-'));
  let sim: Proc | null = null;
  try {
    const scenario = path.join(dir, 'scenario.json');
    const generate = { components: n, configurations: 3 };
    writeFileSync(scenario, JSON.stringify({ generate, operator: { paused: true } }));
    const started = await startSim(scenario);
    sim = started.child;
    const bare = await childPeak(['bare'], o);
    const read = await childPeak([`${started.origin}/v3`, String(o.pageSize ?? 1000)], o);
    if (read.held !== n) throw new Error(`floor child held ${read.held} of ${n} components`);
    return { n, bareMb: bare.peakMb, readMb: read.peakMb };
  } finally {
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
