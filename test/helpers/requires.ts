/**
 * Tests that need something a bare machine with Node and npm lacks (a Debian tool, the published CFS spec, built
 * container images) declare it here. Present: the block runs as a plain describe. Absent: its tests are collected
 * and skipped, under a title the end-of-run summary (test/helpers/skip-summary.js) counts, so `npm test` says what
 * did not run and how to enable it. Under CI (CI=true, as .ci/run runs) an absence is a failing test instead: CI
 * installs everything and must not go green on a skipped check.
 * A block given here must do its tool work in hooks and tests, not while jest collects it (the body runs then,
 * skipped or not).
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface Requirement {
  /** What the tests need, as the summary names it ("amtool", "the published CFS spec"). */
  what: string;
  /** Why it is not here, or undefined when it is. */
  missing?: string;
  /** How to get it. */
  enable: string;
}

/** How to get each program the tests spawn. kubectl is no bookworm package: kubernetes-client is 1.20, too old. */
export const INSTALL: Record<string, string> = {
  promtool: 'apt-get install prometheus',
  prometheus: 'apt-get install prometheus',
  amtool: 'apt-get install prometheus-alertmanager',
  'prometheus-alertmanager': 'apt-get install prometheus-alertmanager',
  kubectl: 'install kubectl 1.21 or later (kustomize v4+ built in), or set KUBECTL to one',
  podman: 'apt-get install podman runc',
  docker: 'a docker client with a running daemon',
};

/** The executable `cmd` resolves to on PATH (or `cmd` itself when it has a slash), or undefined. */
export function which(cmd: string, pathVar = process.env.PATH ?? ''): string | undefined {
  const candidates = cmd.includes('/') ? [cmd] : pathVar.split(path.delimiter).map((d) => path.join(d || '.', cmd));
  return candidates.find((c) => {
    try {
      accessSync(c, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** A program on PATH. */
export function tool(cmd: string, enable = INSTALL[path.basename(cmd)] ?? `install ${cmd}`): Requirement {
  return { what: cmd, missing: which(cmd) ? undefined : `${cmd} not found on PATH`, enable };
}

export const underCi = (env: NodeJS.ProcessEnv = process.env): boolean => /^(1|true|yes)$/i.test(env.CI ?? '');

/** The title a skipped block carries; skip-summary.js parses it back (test/helpers/requires.test.ts checks both). */
export function skippedTitle(title: string, req: Requirement): string {
  return `${title} [SKIPPED: ${req.missing ?? `${req.what} missing`} | to run: ${req.enable}]`;
}

/** describe(title, fn) when every requirement is met; otherwise skipped and counted, or failing under CI. */
export function describeWith(reqs: Requirement | Requirement[], title: string, fn: () => void): void {
  const absent = (Array.isArray(reqs) ? reqs : [reqs]).filter((r) => r.missing !== undefined);
  if (absent.length === 0) {
    describe(title, fn);
    return;
  }
  const req: Requirement = {
    what: absent.map((r) => r.what).join(', '),
    missing: absent.map((r) => r.missing).join('; '),
    enable: absent.map((r) => r.enable).join('; '),
  };
  if (underCi()) {
    describe(title, () => {
      test(`needs ${req.what}`, () => {
        throw new Error(`CI must run these tests, but ${req.missing ?? ''} (${req.enable})`);
      });
    });
    return;
  }
  describe.skip(skippedTitle(title, req), fn);
}

/** describeWith for programs on PATH: describeWithTool('amtool', 'example route', () => { ... }). */
export function describeWithTool(cmds: string | string[], title: string, fn: () => void): void {
  describeWith(
    (Array.isArray(cmds) ? cmds : [cmds]).map((c) => tool(c)),
    title,
    fn,
  );
}
