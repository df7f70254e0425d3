/**
 * Figures the docs quote, each read from its single source and checked in every doc that quotes it: probe values
 * (the manifest's pod, scripts/src/pod-spec.ts), the tracing shutdown bound (SHUTDOWN_TIMEOUT_MS), the images'
 * ENTRYPOINTs (each Dockerfile's, scripts/src/dockerfile.ts), the worst heartbeat gap measured (the gap
 * tables of docs/benchmarks.md), the Node version (package.json), each program's command-line options (its
 * own usage text or option parser) and the tools .ci/run installs; and every markdown table has one width.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { SHUTDOWN_TIMEOUT_MS } from '@cfs-batcher/shared/tracing';
import { parseBenchArgs } from '../../scripts/src/bench-args';
import { PROGRAM_IMAGES, entrypointOf } from '../../scripts/src/dockerfile';
import { USAGE as IMAGES_CHECK_USAGE } from '../../scripts/src/images-check';
import { USAGE as IMAGES_USAGE } from '../../scripts/src/images';
import { parseArgs as parseLocalPodArgs } from '../../scripts/src/local-pod-args';
import { loadPodSpec } from '../../scripts/src/pod-spec';
import { requireBuilt } from '../helpers/built';
import {
  endpointClaimProblems,
  entrypointProblems,
  fold,
  optionsQuoted,
  probeSnippetProblems,
  probeTableProblems,
  secondsProblems,
  tableCells,
  tableProblems,
  tables,
  type Probes,
} from './doc-figures';
import { REPO } from './promql';

const read = (f: string) => readFileSync(path.join(REPO, f), 'utf8');
const DOCS = [
  'README.md',
  ...readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'batcher/README.md',
  'cfs-sim/README.md',
  'sidecar-health/README.md',
];
/** The manifest's comments quote figures too. */
const QUOTING = [...DOCS, 'manifests/base/deployment.yaml'];
const text = new Map(QUOTING.map((f) => [f, read(f)]));
const everywhere = (check: (t: string) => string[], files = QUOTING) =>
  files.flatMap((f) => check(text.get(f)!).map((p) => `${f}: ${p}`));

const pod = loadPodSpec(REPO);
const probes: Probes = Object.fromEntries(Object.entries(pod.containers).map(([n, c]) => [n, c.probes]));
const env = (container: string, name: string) => pod.containers[container]!.env.find((e) => e.name === name)?.value;

test('markdown tables have a header, a separator and one width throughout', () => {
  expect(everywhere(tableProblems, DOCS)).toEqual([]);
});

describe('probe values are the manifest’s', () => {
  const live = probes['cfs-batcher']!.liveness!;
  const startup = probes['cfs-batcher']!.startup!;

  test('probe tables, probe snippets and which probe each endpoint serves', () => {
    const problems = [probeTableProblems, probeSnippetProblems, endpointClaimProblems].flatMap((check) =>
      everywhere((t) => check(t, probes), DOCS),
    );
    expect(problems).toEqual([]);
  });

  test('"liveness p= t= f=" and the startup budget', () => {
    const pft = everywhere((t) =>
      [...fold(t).matchAll(/liveness `?p=(\d+) t=(\d+) f=(\d+)/g)]
        .filter(
          (m) => `${m[1]} ${m[2]} ${m[3]}` !== `${live.periodSeconds} ${live.timeoutSeconds} ${live.failureThreshold}`,
        )
        .map(
          (m) =>
            `"${m[0]}": the manifest has p=${live.periodSeconds} t=${live.timeoutSeconds} f=${live.failureThreshold}`,
        ),
    );
    expect(pft).toEqual([]);
    const budget = everywhere((t) =>
      [...fold(t).matchAll(/startupProbe budget \((\d+) x (\d+)(?: s)? = (\d+) s\)/g)]
        .filter(
          (m) =>
            `${m[1]} ${m[2]} ${m[3]}` !==
            `${startup.failureThreshold} ${startup.periodSeconds} ${startup.failureThreshold * startup.periodSeconds}`,
        )
        .map((m) => `"${m[0]}": the manifest has ${startup.failureThreshold} x ${startup.periodSeconds} s`),
    );
    expect(budget).toEqual([]);
  });

  test('the readers see what they check (the checks can fail)', () => {
    const wrong =
      '| container | probe | endpoint | period p | timeout t | failures f | budget |\n| --- | --- | --- | --- | --- | --- | --- |\n| cfs-batcher | livenessProbe | `GET :8081/livez` | 2 | 3 | 5 | |\n';
    expect(probeTableProblems(wrong, probes)).toEqual([
      `cfs-batcher livenessProbe timeout: doc 3, manifest ${live.timeoutSeconds}`,
    ]);
    const snippet =
      '```yaml\nlivenessProbe: { httpGet: { path: /livez, port: 8081 }, periodSeconds: 2, timeoutSeconds: 3 }\n```';
    expect(probeSnippetProblems(snippet, probes)).toHaveLength(1);
    expect(endpointClaimProblems('| `/readyz` | readable | sidecar `readinessProbe` |', probes)).toHaveLength(1);
  });
});

test('the tracing shutdown bound is the code’s', () => {
  const bound = SHUTDOWN_TIMEOUT_MS / 1000;
  const phrases = [
    /shutdown\b[^;]{0,40}?(?:within|bounded to|bound(?: is)?(?: now)?:?) \(?([\d.]+) s/gi,
    /shutdown bound of [^()]{0,40}\(([\d.]+) s\)/gi,
  ];
  const quotes = (t: string) => phrases.flatMap((re) => [...fold(t).matchAll(re)]);
  expect(everywhere((t) => phrases.flatMap((re) => secondsProblems(t, re, bound, 'tracing shutdown bound')))).toEqual(
    [],
  );
  expect(QUOTING.filter((f) => quotes(text.get(f)!).length > 0).length).toBeGreaterThan(2);
  expect(secondsProblems('`telemetry.shutdown()` (bounded to 3 s)', phrases[0]!, bound, 'x')).toHaveLength(1);
});

test('the worst heartbeat gap is the largest measured (docs/benchmarks.md), and the margin to T follows', () => {
  const gaps = tables(text.get('docs/benchmarks.md')!).flatMap(({ rows }) => {
    const col = tableCells(rows[0]!).indexOf('largest beat gap');
    return col < 0
      ? []
      : rows
          .slice(2)
          .map((r) => parseFloat(tableCells(r)[col]!))
          .filter((g) => !Number.isNaN(g));
  });
  const worst = Math.max(...gaps);
  expect(gaps.length).toBeGreaterThan(4);
  const quoted = [
    /worst (?:beat )?gap measured(?: in [^.,]*? is)? \(?([\d.]+) s/g,
    /worst measured ([\d.]+) s/g,
    /Nothing over ([\d.]+) s in/g,
  ];
  const freshness = Number(env('health-sidecar', 'SIDECAR_FRESHNESS_SECONDS'));
  const margin = Math.round((freshness - worst) * 10) / 10;
  const above = /([\d.]+) s (?:above|over) the worst gap/g;
  expect([
    ...quoted.flatMap((re) => everywhere((t) => secondsProblems(t, re, worst, 'worst beat gap'))),
    ...everywhere((t) => secondsProblems(t, above, margin, `T = ${freshness} s less the worst gap`)),
  ]).toEqual([]);
});

test('an ENTRYPOINT quoted is an image’s', () => {
  const entrypoints = Object.values(PROGRAM_IMAGES).map(({ dockerfile }) => entrypointOf(read(dockerfile), dockerfile));
  expect(everywhere((t) => entrypointProblems(t, entrypoints), DOCS)).toEqual([]);
  expect(DOCS.some((f) => /ENTRYPOINT \[/.test(text.get(f)!))).toBe(true);
  expect(
    entrypointProblems('ENTRYPOINT ["/nodejs/bin/node", "--lite-mode", "batcher/dist/main.js"]', entrypoints),
  ).toHaveLength(1);
});

test('the Node version named is the one the project pins, and the images’ bases follow it', () => {
  const pinned = /^(\d+)\./.exec(JSON.parse(read('package.json')).devDependencies.node as string)![1]!;
  const dockerfiles = Object.values(PROGRAM_IMAGES).map(({ dockerfile }) => read(dockerfile));
  for (const d of dockerfiles) {
    expect(/ARG BUILD_IMAGE=node:(\d+)-/.exec(d)?.[1]).toBe(pinned);
    expect(/ARG RUNTIME_IMAGE=\S*nodejs(\d+)-/.exec(d)?.[1]).toBe(pinned);
  }
  const named = [
    /`node:(\d+)-bookworm-slim`/g,
    /`nodejs(\d+)`/g,
    /standin-node(\d+)-/g,
    /\b(?:pins|pinned|runs on) Node (\d+)/g,
    /\bNode (\d+) (?:LTS|bases|binary)/g,
  ];
  const wrong = everywhere((t) =>
    named.flatMap((re) => [...fold(t).matchAll(re)].filter((m) => m[1] !== pinned).map((m) => `"${m[0]}"`)),
  );
  expect({ pinned, wrong }).toEqual({ pinned, wrong: [] });
});

describe('command-line options in the docs are the programs’ own', () => {
  const [sim, sidecar] = requireBuilt('cfs-sim/dist/main.js', 'sidecar-health/dist/main.js');
  /** What a program prints for --help (usage on stdout, or its refusal naming the usage on stderr). */
  const helpText = (script: string) => {
    const r = spawnSync(process.execPath, [script, '--help'], { encoding: 'utf8', timeout: 30_000 });
    return `${r.stdout}${r.stderr}`;
  };
  const unknownTo = (parse: (argv: string[]) => unknown) => (option: string) => {
    try {
      parse([option]);
      return false;
    } catch (err) {
      return /unknown option/i.test(String((err as Error).message));
    }
  };
  const inUsage = (usage: string) => (option: string) => !new RegExp(`${option}\\b`).test(usage);

  const benchOptionsParagraph = (t: string) =>
    [...(/(?:^|\n)`npm run bench`[\s\S]*?\n\n/.exec(t)?.[0].matchAll(/`(--[a-z][a-z0-9-]*)/g) ?? [])].map((m) => ({
      option: m[1]!,
      line: 'the Options paragraph',
    }));

  test.each([
    ['the simulator', /node cfs-sim\/dist\/main\.js([^`\n]*)/g, () => inUsage(helpText(sim!))],
    ['the sidecar', /node sidecar-health\/dist\/main\.js([^`\n#]*)/g, () => inUsage(helpText(sidecar!))],
    [
      'the local pod',
      /(?:node scripts\/dist\/local-pod\.js|npm start --)([^`\n]*)/g,
      () => unknownTo(parseLocalPodArgs),
    ],
    ['the benchmarks', /(?:node scripts\/dist\/bench\.js|npm run bench --)([^`\n]*)/g, () => unknownTo(parseBenchArgs)],
    ['npm run images', /(?:npm run images --|node scripts\/dist\/images\.js)([^`\n]*)/g, () => inUsage(IMAGES_USAGE)],
    ['the image check', /node scripts\/dist\/images-check\.js([^`\n]*)/g, () => inUsage(IMAGES_CHECK_USAGE)],
  ] as const)('%s', (name, command, unknown) => {
    const isUnknown = unknown();
    const quoted = DOCS.flatMap((f) => {
      const t = text.get(f)!;
      const extra = name === 'the benchmarks' && f === 'docs/benchmarks.md' ? benchOptionsParagraph(t) : [];
      return [...optionsQuoted(t, command), ...extra].map((q) => ({ ...q, file: f }));
    });
    expect(quoted.filter((q) => isUnknown(q.option)).map((q) => `${q.file}: ${q.option} in ${q.line}`)).toEqual([]);
  });

  test('an option a program does not know is caught', () => {
    expect(unknownTo(parseBenchArgs)('--no-such-option')).toBe(true);
    expect(unknownTo(parseBenchArgs)('--runs')).toBe(false);
    expect(inUsage(IMAGES_USAGE)('--engine')).toBe(true);
  });
});

test('the README’s requirements name every tool .ci/run installs', () => {
  const ci = read('.ci/run');
  const packages = [...(/need=\(([^)]*)\)/.exec(ci)?.[1] ?? '').matchAll(/([a-z0-9-]+):/g)].map((m) => m[1]!);
  expect(packages.length).toBeGreaterThan(0);
  const readme = text.get('README.md')!;
  const requirements = readme.slice(
    readme.indexOf('## Requirements'),
    readme.indexOf('\n## ', readme.indexOf('## Requirements') + 1),
  );
  expect([...new Set([...packages, 'kubectl'])].filter((p) => !requirements.includes(`\`${p}\``))).toEqual([]);
});
