/**
 * Pure readers for the docs test of figures (docs-figures.test.ts): each takes a doc's text and the value from its
 * single source, and returns the places that disagree, as "what: doc says X, source says Y".
 */
import YAML from 'yaml';
import type { ProbeSpec } from '../../scripts/src/probe-spec';

export type Probes = Record<string, { startup?: ProbeSpec; liveness?: ProbeSpec; readiness?: ProbeSpec }>;
type Kind = 'startup' | 'liveness' | 'readiness';

/** Prose with line breaks (and YAML comment marks) folded, so a phrase wrapped over two lines is still one phrase. */
export const fold = (text: string): string => text.replace(/\s*\n\s*(?:#\s+)?/g, ' ');

/** Cells of one markdown table row: GitHub splits on every unescaped `|`, inside code spans too. */
export function tableCells(line: string): string[] {
  const cells = line.trim().split(/(?<!\\)\|/);
  return cells.slice(1, line.trim().endsWith('|') ? -1 : undefined).map((c) => c.trim());
}

/** The tables of a markdown text (outside code blocks): runs of lines starting with `|`, with their line number. */
export function tables(text: string): { line: number; rows: string[] }[] {
  const out: { line: number; rows: string[] }[] = [];
  let fenced = false;
  text.split('\n').forEach((l, i) => {
    if (l.startsWith('```')) fenced = !fenced;
    const row = !fenced && l.trimStart().startsWith('|');
    const last = out.at(-1);
    if (row && last && last.line + last.rows.length === i + 1) last.rows.push(l);
    else if (row) out.push({ line: i + 1, rows: [l] });
  });
  return out;
}

/** Tables with a missing separator row or rows of another width than the header. */
export function tableProblems(text: string): string[] {
  return tables(text).flatMap(({ line, rows }) => {
    const width = tableCells(rows[0]!).length;
    if (rows.length < 2 || !/^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/.test(rows[1]!.trim()))
      return [`line ${line}: a table row without a header and separator row (a table cut in two?)`];
    return rows.flatMap((r, i) => {
      const n = tableCells(r).length;
      return n === width ? [] : [`line ${line + i}: ${n} cells, the header has ${width}`];
    });
  });
}

const KINDS: Record<string, Kind> = { startupProbe: 'startup', livenessProbe: 'liveness', readinessProbe: 'readiness' };

/** The container and probe kind whose probe requests `path` (one answer only: several would make a doc ambiguous). */
function probeByPath(probes: Probes, path: string): { container: string; kind: Kind; probe: ProbeSpec } | undefined {
  for (const [container, ps] of Object.entries(probes))
    for (const kind of ['startup', 'liveness', 'readiness'] as const) {
      const probe = ps[kind];
      if (probe?.path === path) return { container, kind, probe };
    }
  return undefined;
}

/** A probe table (container | probe | endpoint | period | timeout | failures | ...) against the manifest. */
export function probeTableProblems(text: string, probes: Probes): string[] {
  const out: string[] = [];
  for (const { rows } of tables(text)) {
    const head = tableCells(rows[0]!).map((h) => h.toLowerCase());
    if (head[0] !== 'container' || head[1] !== 'probe') continue;
    const col = (name: string) => head.findIndex((h) => h.startsWith(name));
    for (const row of rows.slice(2)) {
      const c = tableCells(row);
      const probe = probes[c[0]!]?.[KINDS[c[1]!] ?? ('?' as Kind)];
      if (!probe) {
        out.push(`${c[0]} ${c[1]}: no such probe in the manifest`);
        continue;
      }
      const want: [string, number][] = [
        ['period', probe.periodSeconds],
        ['timeout', probe.timeoutSeconds],
        ['failures', probe.failureThreshold],
      ];
      for (const [name, value] of want)
        if (Number(c[col(name)]) !== value) out.push(`${c[0]} ${c[1]} ${name}: doc ${c[col(name)]}, manifest ${value}`);
      if (!c[col('endpoint')]?.includes(probe.path)) out.push(`${c[0]} ${c[1]}: the manifest probes ${probe.path}`);
      const budget = /^(\d+) s$/.exec(c[col('budget')] ?? '');
      if (budget && Number(budget[1]) !== probe.periodSeconds * probe.failureThreshold)
        out.push(
          `${c[0]} ${c[1]} budget: doc ${budget[1]} s, manifest ${probe.failureThreshold} x ${probe.periodSeconds} s`,
        );
    }
  }
  return out;
}

/** `startupProbe: { httpGet: {...}, periodSeconds: ... }` lines of code blocks, against the probe with that path. */
export function probeSnippetProblems(text: string, probes: Probes): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^(startupProbe|livenessProbe|readinessProbe):\s*(\{.*\})\s*$/gm)) {
    const snippet = YAML.parse(m[2]!) as Record<string, unknown> & { httpGet?: { path?: string; port?: unknown } };
    const found = probeByPath(probes, snippet.httpGet?.path ?? '');
    if (!found || found.kind !== KINDS[m[1]!]) {
      out.push(`${m[1]} ${snippet.httpGet?.path}: no such probe in the manifest`);
      continue;
    }
    const fields = ['periodSeconds', 'timeoutSeconds', 'failureThreshold', 'terminationGracePeriodSeconds'] as const;
    for (const f of fields)
      if (f in snippet && snippet[f] !== found.probe[f])
        out.push(`${m[1]} ${found.probe.path} ${f}: doc ${String(snippet[f])}, manifest ${found.probe[f]}`);
    if (snippet.httpGet?.port !== found.probe.port)
      out.push(`${m[1]} port: doc ${String(snippet.httpGet?.port)}, manifest ${found.probe.port}`);
  }
  return out;
}

/**
 * Claims that an endpoint serves a given probe, "`/readyz` | ... | batcher `readinessProbe`" in a table row or
 * "`/livez` (batcher livenessProbe)" in prose: the manifest's probe of that container and kind requests that path.
 */
export function endpointClaimProblems(text: string, probes: Probes): string[] {
  const out: string[] = [];
  const claim = /\b(batcher|sidecar)(?:'s)? `?(startup|liveness|readiness)(?:Probe| probe)?`?/g;
  const container = (who: string) => (who === 'batcher' ? 'cfs-batcher' : 'health-sidecar');
  const check = (path: string, where: string) => {
    for (const m of where.matchAll(claim)) {
      const probe = probes[container(m[1]!)]?.[m[2] as Kind];
      if (probe?.path !== path)
        out.push(`${path}: said to be the ${m[1]}'s ${m[2]} probe, which requests ${probe?.path}`);
    }
  };
  for (const { rows } of tables(text))
    for (const row of rows) {
      const [first, ...rest] = tableCells(row);
      const path = /^`(\/[a-z]+)`$/.exec(first ?? '')?.[1];
      if (path) check(path, rest.join(' | '));
    }
  for (const m of fold(text).matchAll(/`(\/[a-z]+)` \(([^()]*)/g)) check(m[1]!, m[2]!.split(/[:;]/)[0]!);
  return out;
}

/** Every `re` match (group 1, a number in seconds) that differs from `value`, as "phrase: doc X s, source Y s". */
export function secondsProblems(text: string, re: RegExp, value: number, what: string): string[] {
  return [...fold(text).matchAll(re)]
    .filter((m) => Math.abs(Number(m[1]) - value) > 1e-9)
    .map((m) => `${what}: "${m[0]}" says ${m[1]} s, the source ${value} s`);
}

/** ENTRYPOINT quotes against each image's ENTRYPOINT. */
export function entrypointProblems(text: string, entrypoints: string[][]): string[] {
  const out: string[] = [];
  const prose = fold(text);
  for (const m of prose.matchAll(/ENTRYPOINT (\[[^\]]*\])/g)) {
    const quoted = JSON.parse(m[1]!) as string[];
    if (!entrypoints.some((e) => JSON.stringify(e) === JSON.stringify(quoted)))
      out.push(`ENTRYPOINT ${m[1]}: no image has it (${entrypoints.map((e) => JSON.stringify(e)).join(', ')})`);
  }
  return out;
}

/** Options of `--name` form in the command lines that `command` finds (group 1: what follows the program). */
export function optionsQuoted(text: string, command: RegExp): { option: string; line: string }[] {
  const out: { option: string; line: string }[] = [];
  for (const m of text.matchAll(command))
    for (const o of (m[1] ?? '').matchAll(/(?:^|[\s[])(--[a-z][a-z0-9-]*)/g)) out.push({ option: o[1]!, line: m[0] });
  return out;
}
