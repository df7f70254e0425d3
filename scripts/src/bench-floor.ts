/**
 * The runtime's floor (issue 15): peak RSS of node itself and of the least program that does the batcher's reading
 * (floor-child.ts), with the batcher's node flags, NODE_OPTIONS and runtime env, against the simulator with N pending
 * components. What the batcher spends above it is its own; what the floor spends no Node program can avoid.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startNode, startSim } from './bench-procs';

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
}

async function childPeak(arg: string, o: FloorOptions): Promise<{ peakMb: number; held: number }> {
  const child = startNode(
    'scripts/dist/floor-child.js',
    [arg],
    { ...o.runtimeEnv, NODE_OPTIONS: o.nodeOptions },
    o.nodeFlags,
  );
  const exit = await child.waitForExit(300_000);
  const line = child.lines.find((l) => typeof l.json?.peakMb === 'number');
  if (exit.code !== 0 || !line) throw new Error(`floor child (${arg}) failed: ${child.tail(5)}`);
  return { peakMb: Number(line.json?.peakMb), held: Number(line.json?.held) };
}

export async function runFloorBench(n: number, o: FloorOptions): Promise<FloorRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfsb-floor-'));
  const scenario = path.join(dir, 'scenario.json');
  writeFileSync(
    scenario,
    JSON.stringify({ generate: { components: n, configurations: 3 }, operator: { paused: true } }),
  );
  const { child: sim, origin } = await startSim(scenario);
  try {
    const bare = await childPeak('bare', o);
    const read = await childPeak(`${origin}/v3`, o);
    if (read.held !== n) throw new Error(`floor child held ${read.held} of ${n} components`);
    return { n, bareMb: bare.peakMb, readMb: read.peakMb };
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
