/**
 * The programs run on a stock Node: each image starts plain `node <script>`, and the only runtime flags anywhere
 * are Node's documented heap sizes (`--max-old-space-size`, `--max-semi-space-size`) in a manifest's NODE_OPTIONS,
 * each below its container's memory limit. Any other flag in a Dockerfile's ENTRYPOINT or CMD, or in a NODE_OPTIONS
 * a rendered manifest sets (a container's env or a ConfigMap it loads), fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { entrypointOf, parseDockerfile, PROGRAM_IMAGES } from '../../scripts/src/dockerfile';
import { describeWithTool } from '../helpers/requires';
import { KUBECTL, kustomizeDirs, quantity, render, ROOT, type K8sObject } from './manifest-helpers';

const HEAP_FLAG = /^--max-(old|semi)-space-size=(\d+)$/;

/** Pure: the words of a NODE_OPTIONS value that are not one of the two heap flags with a size in MB. */
function foreignFlags(nodeOptions: string): string[] {
  return nodeOptions.split(/\s+/).filter((w) => w !== '' && !HEAP_FLAG.test(w));
}

/** Pure: a Dockerfile's exec-form ENTRYPOINT/CMD words that are runtime flags (anything starting with `-`). */
function commandFlags(text: string): string[] {
  return parseDockerfile(text)
    .filter((i) => i.op === 'ENTRYPOINT' || i.op === 'CMD')
    .flatMap((i) => {
      const words: unknown = i.args.startsWith('[') ? JSON.parse(i.args) : i.args.split(/\s+/);
      return (words as string[]).filter((w) => w.startsWith('-'));
    });
}

describe('the images run plain node', () => {
  const dockerfiles = readdirSync(ROOT).filter((f) => /^Dockerfile/.test(f));

  it('finds the two images', () => {
    expect(dockerfiles.sort()).toEqual(
      Object.values(PROGRAM_IMAGES)
        .map((p) => p.dockerfile)
        .sort(),
    );
  });

  it.each(Object.values(PROGRAM_IMAGES))('$dockerfile: ENTRYPOINT is [node, $entry], nothing between', (image) => {
    const text = readFileSync(path.join(ROOT, image.dockerfile), 'utf8');
    expect(entrypointOf(text, image.dockerfile)).toEqual(['/nodejs/bin/node', image.entry]);
    expect(commandFlags(text)).toEqual([]);
  });

  it('the check sees a flag in an ENTRYPOINT or a CMD, and anything but the two heap flags in NODE_OPTIONS', () => {
    expect(commandFlags('FROM x\nENTRYPOINT ["/nodejs/bin/node", "--lite-mode", "m.js"]\n')).toEqual(['--lite-mode']);
    expect(commandFlags('FROM x\nCMD ["--jitless"]\n')).toEqual(['--jitless']);
    expect(foreignFlags('--max-old-space-size=150 --max-semi-space-size=1')).toEqual([]);
    expect(foreignFlags('--max-old-space-size=150 --no-separate-gc-phases')).toEqual(['--no-separate-gc-phases']);
    expect(foreignFlags('--max-old-space-size')).toEqual(['--max-old-space-size']);
    expect(foreignFlags('--require x.js')).toEqual(['--require', 'x.js']);
  });
});

describeWithTool(KUBECTL, 'NODE_OPTIONS in every rendered manifest', () => {
  let rendered: Array<{ dir: string; objects: K8sObject[] }>;
  beforeAll(() => (rendered = kustomizeDirs().map((dir) => ({ dir, objects: render(dir) }))));

  it('holds only the heap flags, each under its container memory limit', () => {
    const problems: string[] = [];
    let seen = 0;
    for (const { dir, objects } of rendered) {
      for (const o of objects) {
        if (o.kind === 'ConfigMap' && o.data?.NODE_OPTIONS !== undefined) {
          seen += 1;
          problems.push(`${dir} ConfigMap ${o.metadata.name}: NODE_OPTIONS belongs beside the container's limit`);
        }
        for (const c of (o.spec?.template?.spec?.containers ?? []) as K8sObject[]) {
          const value = (c.env as Array<{ name: string; value?: string }> | undefined)?.find(
            (e) => e.name === 'NODE_OPTIONS',
          )?.value;
          if (value === undefined) continue;
          seen += 1;
          const where = `${dir} ${o.kind} ${o.metadata.name} container ${c.name as string}`;
          for (const f of foreignFlags(value)) problems.push(`${where}: ${f}`);
          const limit = c.resources?.limits?.memory;
          if (limit === undefined) problems.push(`${where}: a heap size without a memory limit to derive it from`);
          for (const w of value.split(/\s+/)) {
            const m = /^--max-old-space-size=(\d+)$/.exec(w);
            if (m && limit !== undefined && Number(m[1]) * 2 ** 20 > 0.75 * quantity(limit))
              problems.push(`${where}: old space ${m[1]} MB leaves too little of the ${limit as string} limit`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
    expect(seen).toBeGreaterThan(0);
  });
});
