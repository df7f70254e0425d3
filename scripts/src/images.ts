/**
 * `npm run images` (options in USAGE): builds both images with the first engine that works here (docker, podman,
 * buildah; ENGINE picks one), prints each build's time and size, and with --check runs the image check
 * (images-check.ts) on what it built. Settings are environment variables, declared once below.
 */
import '@cfs-batcher/shared/node-check';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setLogSilent } from '@cfs-batcher/shared';
import { checkImages } from './images-check';
import { type BuildEngine, detectEngine, imageExists, imageSize } from './images-engine';

const ROOT = path.resolve(__dirname, '..', '..');

export const USAGE = `usage: npm run images -- [--standin] [--check] [--help]
  --standin  build on local stand-in bases (scripts/images/standin-bases.sh: mmdebstrap, podman or buildah)
  --check    then run both images as the manifest does (images-check.ts: docker or podman, runc)
  settings are environment variables: ENGINE=docker|podman|buildah, IMAGE_TAG, BUILD_IMAGE, RUNTIME_IMAGE,
  EXTRA_CA_CERTS, NPM_REGISTRY, BUILD_ISOLATION (docs/deployment.md)`;

/** The images, named as in manifests/base. */
export const IMAGES = [
  { file: 'Dockerfile.batcher', name: 'cfs-batcher' },
  { file: 'Dockerfile.sidecar', name: 'cfs-batcher-health-sidecar' },
] as const;

export interface ImageSettings {
  engine: string; // ENGINE: docker | podman | buildah; empty: the first that answers
  tag: string; // IMAGE_TAG
  buildImage: string; // BUILD_IMAGE: empty keeps the Dockerfiles' default (node:24-bookworm-slim)
  runtimeImage: string; // RUNTIME_IMAGE: empty keeps the Dockerfiles' default (distroless nodejs24)
  extraCa: string; // EXTRA_CA_CERTS: CA bundle for npm in the build stages; unset: NODE_EXTRA_CA_CERTS; empty: none
  npmRegistry: string; // NPM_REGISTRY: npm registry mirror for the build stages; empty: npm's default
  isolation: string; // BUILD_ISOLATION: podman/buildah RUN isolation (chroot needs no OCI runtime setup)
}

export function settingsFrom(env: NodeJS.ProcessEnv): ImageSettings {
  return {
    engine: env.ENGINE ?? '',
    tag: env.IMAGE_TAG || '0.1.0',
    buildImage: env.BUILD_IMAGE ?? '',
    runtimeImage: env.RUNTIME_IMAGE ?? '',
    extraCa: env.EXTRA_CA_CERTS ?? env.NODE_EXTRA_CA_CERTS ?? '',
    npmRegistry: env.NPM_REGISTRY ?? '',
    isolation: env.BUILD_ISOLATION || 'chroot',
  };
}

/** The stand-in bases scripts/images/standin-bases.sh makes (a helper for tests and development, never the shipped default). */
export const STANDIN = {
  build: 'localhost/standin-node24-build:bookworm',
  runtime: 'localhost/standin-node24-runtime:bookworm',
};

/** Pure: the engine command line that builds one image. */
export function buildCommand(engine: BuildEngine, s: ImageSettings, file: string, image: string): string[] {
  const cmd: string[] =
    engine === 'docker' ? ['docker', 'build'] : engine === 'podman' ? ['podman', 'build'] : ['buildah', 'bud'];
  if (engine !== 'docker') cmd.push('--layers', '--isolation', s.isolation); // docker: BuildKit reads RUN --mount itself
  if (s.buildImage) cmd.push('--build-arg', `BUILD_IMAGE=${s.buildImage}`);
  if (s.runtimeImage) cmd.push('--build-arg', `RUNTIME_IMAGE=${s.runtimeImage}`);
  if (s.npmRegistry) cmd.push('--build-arg', `NPM_REGISTRY=${s.npmRegistry}`);
  if (s.extraCa) cmd.push('--secret', `id=extra-ca,src=${s.extraCa}`); // mounted for the npm steps only
  cmd.push('-f', file, '-t', image, '.');
  return cmd;
}

function run(cmd: string[]): Promise<number> {
  return new Promise((resolve) => {
    // build output goes to stderr: stdout carries only the figures
    const child = spawn(cmd[0] as string, cmd.slice(1), {
      cwd: ROOT,
      env: process.env,
      stdio: ['ignore', process.stderr, process.stderr],
    });
    child.on('error', () => resolve(127));
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv.includes('--help')) {
    console.log(USAGE);
    return 0;
  }
  const bad = argv.find((a) => !['--standin', '--check'].includes(a));
  if (bad) {
    console.error(`images: unknown argument ${bad}\n${USAGE}`);
    return 2;
  }
  const s = settingsFrom(env);
  const engine = await detectEngine(s.engine ? [s.engine as BuildEngine] : ['docker', 'podman', 'buildah']);
  if (!engine) {
    console.error(`images: no working ${s.engine || 'docker, podman or buildah'}`);
    return 1;
  }
  if (argv.includes('--standin')) {
    s.buildImage ||= STANDIN.build;
    s.runtimeImage ||= STANDIN.runtime;
    if (!(await imageExists(engine, s.buildImage)) || !(await imageExists(engine, s.runtimeImage))) {
      const r = spawnSync('bash', [path.join(ROOT, 'scripts/images/standin-bases.sh')], {
        stdio: ['ignore', process.stderr, process.stderr],
        env: { ...env, STANDIN_BUILD_IMAGE: s.buildImage, STANDIN_RUNTIME_IMAGE: s.runtimeImage },
      });
      if (r.status !== 0) return 1;
    }
  }
  if (s.extraCa) {
    try {
      accessSync(s.extraCa, constants.R_OK);
    } catch {
      console.error(`images: the extra CA bundle ${s.extraCa} is not readable`);
      return 1;
    }
  }
  console.error(
    `images: engine ${engine}${s.buildImage ? `, build base ${s.buildImage}` : ''}${s.runtimeImage ? `, runtime base ${s.runtimeImage}` : ''}${s.extraCa ? ', extra CA for npm' : ''}`,
  );
  const built: string[] = [];
  for (const { file, name } of IMAGES) {
    const image = `localhost/${name}:${s.tag}`;
    const t = performance.now();
    const code = await run(buildCommand(engine, s, file, image));
    if (code !== 0) {
      console.error(`images: ${file} failed (exit ${code})`);
      return 1;
    }
    const mb = Math.round((await imageSize(engine, image)) / 1e6);
    console.log(`images: ${file} ${image} built in ${((performance.now() - t) / 1000).toFixed(1)} s, ${mb} MB`);
    built.push(image);
  }
  if (!argv.includes('--check')) return 0;
  if (engine === 'buildah') {
    console.error('images: the check runs containers: it needs docker or podman');
    return 1;
  }
  setLogSilent(true); // the in-process simulator's lines would mix with the figures
  const report = await checkImages({
    engine,
    batcherImage: built[0]!,
    sidecarImage: built[1]!,
    log: (l) => console.error(`images-check: ${l}`),
  });
  console.log(JSON.stringify(report, null, 2));
  return report.problems.length === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      console.error(`images: ${err instanceof Error ? err.message : String(err)}`);
      process.exitCode = 1;
    },
  );
}
