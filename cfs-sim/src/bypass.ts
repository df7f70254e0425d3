/** Requests that arrive on the control port: never faulted, never counted (tests read and seed through it). */
import type { IncomingMessage } from 'node:http';

const CONTROL = Symbol('cfs-sim.control');

export function markControl(req: IncomingMessage): void {
  (req as unknown as Record<symbol, boolean>)[CONTROL] = true;
}

export function isControlRequest(req: IncomingMessage): boolean {
  return (req as unknown as Record<symbol, boolean>)[CONTROL] === true;
}
