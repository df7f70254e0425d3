/**
 * Docs that cannot drift: every alert, metric, /livez reason code, environment variable, container, deployment and
 * dashboard panel that README.md and docs/*.md name exists in the code, the programs' registries or the rendered
 * manifests; and every kubectl command they show is one kubectl accepts (run against a kubeconfig whose API server
 * is a closed port on 127.0.0.1: a command that gets as far as dialling the server has parsed). The blocks that need
 * kubectl are skipped without it and listed at the end of the run (CI: a failure). Figures: docs-figures.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BATCHER_SETTINGS, CREATE_FAILURE_REASONS, createMetrics } from '@cfs-batcher/batcher';
import { isServiceLink } from '@cfs-batcher/shared';
import { REASONS, SIDECAR_SETTINGS, SidecarMetrics } from '@cfs-batcher/sidecar-health';
import { envNamesReadBy, find, KUBECTL, render, type K8sObject } from '../deploy/manifest-helpers';
import { freePort } from '../helpers/ports';
import { describeWithTool } from '../helpers/requires';
import { makeTempDir } from '../helpers/tmp';
import { DASHBOARD_FILE } from './queries';
import { EXTERNAL_METRICS, REPO, exposedMetrics, selectableNames } from './promql';
import YAML from 'yaml';

const DOCS = [
  'README.md',
  ...readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = new Map(DOCS.map((f) => [f, readFileSync(path.join(REPO, f), 'utf8')]));
const RUNBOOK = text.get('docs/runbook.md')!;
/**
 * Deployments of CSM itself that the docs may name: the CFS API and operator, and the original batcher (scaled to 0,
 * never restarted).
 */
const CSM_DEPLOYMENTS = new Set(['cray-cfs-api', 'cray-cfs-operator', 'cray-cfs-batcher']);

/** The runbook's section under `## <heading>`, up to the next heading of that level. */
function runbookSection(heading: string): string {
  const start = RUNBOOK.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/runbook.md has no section "## ${heading}"`);
  const end = RUNBOOK.indexOf('\n## ', start + 1);
  return RUNBOOK.slice(start, end < 0 ? undefined : end);
}

/** The backticked first cells of a markdown table's rows. */
function tableKeys(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([a-z_0-9]+)` \|/gm)].map((m) => m[1]!);
}

/** Keys of the overlays' kustomize env files (site settings such as RUNBOOK_URL, not program variables). */
function overlaySettings(): Set<string> {
  const out = new Set<string>();
  const overlays = path.join(REPO, 'manifests', 'overlays');
  for (const dir of readdirSync(overlays))
    for (const f of readdirSync(path.join(overlays, dir)).filter((x) => x.endsWith('.env')))
      for (const m of readFileSync(path.join(overlays, dir, f), 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm))
        out.add(m[1]!);
  return out;
}

/** Every match of `re` (group 1) in every doc, as "file: value". */
function mentions(re: RegExp): { file: string; value: string }[] {
  const out: { file: string; value: string }[] = [];
  for (const [file, t] of text) for (const m of t.matchAll(re)) out.push({ file, value: m[1]! });
  return out;
}

describe('names in the docs exist', () => {
  describeWithTool(KUBECTL, 'in the rendered CSM overlay', () => {
    let csm: K8sObject[];
    beforeAll(() => (csm = render('manifests/overlays/csm')));

    test('alert names are alerts of the PrometheusRule', () => {
      const rule = find(csm, 'PrometheusRule');
      const alerts = new Set(
        rule.spec.groups.flatMap((g: { rules: { alert?: string }[] }) => g.rules.map((r) => r.alert)),
      );
      const unknown = mentions(/\b(CfsBatcher[A-Za-z]+)\b/g).filter((m) => !alerts.has(m.value));
      expect(unknown).toEqual([]);
    });

    test("containers and deployments are the rendered ones (or CSM's own), and the runbook never restarts the original", () => {
      const deployment = find(csm, 'Deployment');
      const rendered = new Set<string>(deployment.spec.template.spec.containers.map((c: { name: string }) => c.name));
      // `-c NAME` of kubectl commands only (`taskset -c 0` in the benchmarks is a CPU list).
      const containers = [
        ...mentions(/kubectl[^\n`]*? -c ([a-z0-9-]+)/g),
        ...mentions(/container="([a-z0-9-]+)"/g),
      ].filter((m) => !rendered.has(m.value));
      expect(containers).toEqual([]);
      const deployments = mentions(/kubectl[^\n`]*?\bdeploy(?:ment)?[/ ]([a-z0-9-]+)/g).filter(
        (m) => m.value !== deployment.metadata.name && !CSM_DEPLOYMENTS.has(m.value),
      );
      expect(deployments).toEqual([]);
      expect(RUNBOOK).not.toMatch(/rollout restart deploy(?:ment)?[/ ]cray-cfs-batcher/);
    });
  });

  test('metric names are exported by the programs (or by kube-state-metrics)', async () => {
    const b = await createMetrics({ version: '0' }).registry.metrics();
    const s = await new SidecarMetrics().registry.metrics();
    const real = selectableNames([...exposedMetrics(b), ...exposedMetrics(s)]);
    const unknown = mentions(/\b((?:cfs_batcher|kube)_[a-z0-9_]+)\b/g).filter(
      (m) => !real.has(m.value) && !EXTERNAL_METRICS.has(m.value),
    );
    expect(unknown).toEqual([]);
  });

  test("/livez reason codes are the sidecar's, the runbook table lists every failing one, and no old name is left", () => {
    const reasons = new Set<string>(REASONS);
    const unknown = mentions(/`((?:heartbeat|phase|no)_[a-z_]+|stale|stalled|no heartbeat|bad file)`/g).filter(
      (m) => !reasons.has(m.value) && !/_(ms|seconds)$/.test(m.value),
    ); // heartbeat fields are not reasons
    expect(unknown).toEqual([]);
    const table = tableKeys(runbookSection('/livez failure reasons'));
    expect(table.sort()).toEqual(REASONS.filter((r) => r !== 'ok').sort());
  });

  test('the runbook has a line for every reason a session create can fail with, and no other', () => {
    const table = tableKeys(runbookSection('CfsBatcherSessionCreatesFailing'));
    expect(table.sort()).toEqual([...CREATE_FAILURE_REASONS].sort());
  });

  test('environment variables are read by some program, the tests, Node or the OpenTelemetry SDK, or are overlay settings', () => {
    // The programs' settings (and their former ones, which they refuse naming the replacement), and what the
    // simulator, the scripts and the tests read.
    const read = new Set([
      ...envNamesReadBy('batcher/src', 'sidecar-health/src', 'shared/src', 'cfs-sim/src', 'scripts/src', 'test'),
      ...[BATCHER_SETTINGS, SIDECAR_SETTINGS].flatMap((s) => [...s.known, ...Object.keys(s.retired)]),
    ]);
    // Read by Node, glibc (MALLOC_ARENA_MAX), the OpenTelemetry SDK or Istio's proxy (its proxyMetadata), not by our
    // code; or set by Kubernetes (service links, which the programs must never refuse: the docs name them to say so).
    const runtime = (n: string) =>
      n.startsWith('OTEL_') ||
      n === 'NODE_OPTIONS' ||
      n === 'MALLOC_ARENA_MAX' ||
      n === 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS' ||
      isServiceLink(n, undefined);
    // Upper-case names the docs cite that are code constants (exported by shared), not environment variables.
    const constants = new Set(
      [
        'shared/src/contract.ts',
        'shared/src/cfs/client-options.ts',
        'batcher/src/config.ts',
        'batcher/src/explain-service.ts',
        'sidecar-health/src/config.ts',
      ].flatMap((file) =>
        [...readFileSync(path.join(REPO, file), 'utf8').matchAll(/export const ([A-Z][A-Z0-9_]*)\b/g)].map(
          (m) => m[1] as string,
        ),
      ),
    );
    const settings = overlaySettings();
    expect(settings.size).toBeGreaterThan(0);
    const unknown = mentions(/`([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?:[=`(*])/g).filter(
      (m) => !read.has(m.value) && !runtime(m.value) && !constants.has(m.value) && !settings.has(m.value),
    );
    expect(unknown).toEqual([]);
  });

  test('dashboard panels named in the docs exist', () => {
    const cm = YAML.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { data: Record<string, string> };
    const titles = new Set(
      (JSON.parse(cm.data['cfs-batcher.json']!) as { panels: { title: string }[] }).panels.map((p) => p.title),
    );
    expect(mentions(/"([^"\n]+)" panel/g).filter((m) => !titles.has(m.value))).toEqual([]);
  });
});

/** Shell words of one command line (quotes, no expansion). */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}

/** kubectl command lines of a doc: code blocks and inline code, with $(...) opened, pipes, `&` and comments cut. */
function kubectlCommands(doc: string): string[] {
  const lines: string[] = [];
  for (const block of doc.matchAll(/```[a-z]*\n([\s\S]*?)```/g)) lines.push(...block[1]!.split('\n'));
  // Inline code: a command, not a bare subcommand named in prose ("use `kubectl port-forward`").
  for (const inline of doc.replace(/```[\s\S]*?```/g, '').matchAll(/`(kubectl [^`]+)`/g)) {
    const cmd = inline[1]!.replace(/\s*\n\s*/g, ' ');
    if (cmd.split(' ').length > 2) lines.push(cmd);
  }
  return lines
    .map((l) => /\$\((kubectl [^)]*)\)/.exec(l)?.[1] ?? l)
    .map((l) =>
      l
        .replace(/\s+#.*$/, '')
        .replace(/\s*\|.*$/, '')
        .replace(/\s*&\s*$/, '')
        .trim(),
    )
    .filter((l) => l.startsWith('kubectl '));
}

/** What kubectl says when it rejects the command line itself, before any request. */
const REJECTED =
  /unknown flag|unknown shorthand flag|unknown command|there is no need to specify a resource type|accepts \d+ arg|requires at least|required flag|invalid argument|error: you must specify|must be specified/i;

describeWithTool(KUBECTL, 'kubectl commands in the docs parse', () => {
  const tmp = makeTempDir('kubectl');
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    const kubeconfig = path.join(tmp.dir, 'kubeconfig');
    const server = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    writeFileSync(
      kubeconfig,
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'none', cluster: { server } }],
        contexts: [{ name: 'none', context: { cluster: 'none' } }],
        'current-context': 'none',
        users: [],
      }),
    );
    env = { PATH: process.env.PATH, HOME: tmp.dir, KUBECONFIG: kubeconfig };
  });
  afterAll(() => tmp.cleanup());

  /** Runs one command; "parsed" when kubectl succeeded or got as far as dialling the (absent) API server. */
  function run(cmd: string, pod: string): { parsed: boolean; out: string } {
    const args = words(cmd.replace(/"\$POD"|\$POD/g, pod)).slice(1);
    const r = spawnSync(KUBECTL, [...args, '--request-timeout=2s'], {
      cwd: REPO,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    return {
      parsed: !REJECTED.test(out) && (r.status === 0 || /connection refused|was refused/.test(out)),
      out: out.slice(-400),
    };
  }

  const runbookPod = (doc: string): string =>
    /POD=\$\(kubectl [^)]*-o name/.test(doc) ? 'pod/cfs-batcher-7d9f-x2k4q' : 'cfs-batcher-7d9f-x2k4q';

  test.each(DOCS.filter((f) => kubectlCommands(text.get(f)!).length > 0))('%s', (file) => {
    const doc = text.get(file)!;
    const bad = kubectlCommands(doc)
      .map((c) => ({ c, ...run(c, runbookPod(doc)) }))
      .filter((r) => !r.parsed)
      .map((r) => `${r.c}\n  ${r.out}`);
    expect(bad).toEqual([]);
  });

  test('every runbook command on the batcher pod names the namespace', () => {
    const loose = kubectlCommands(RUNBOOK).filter(
      (c) => /\$POD|cfs-batcher/.test(c) && !/ -n services |--namespace[= ]services/.test(` ${c} `),
    );
    expect(loose).toEqual([]);
  });

  test('the check rejects what kubectl rejects: describe with a resource/name POD, an unknown flag', () => {
    expect(run('kubectl -n services describe pod "$POD"', 'pod/cfs-batcher-x').parsed).toBe(false);
    expect(run('kubectl -n services logs "$POD" --tail-lines=5', 'cfs-batcher-x').parsed).toBe(false);
    expect(run('kubectl -n services describe pod "$POD"', 'cfs-batcher-x').parsed).toBe(true);
  });
});
