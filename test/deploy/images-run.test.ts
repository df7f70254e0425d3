/**
 * `npm run images` and the image check. The build script is run against stub engines (which engine it picks, what it
 * passes); the check runs the real images when an engine and both built images are on this machine (`npm run
 * images`, see docs/deployment.md#images), and is skipped otherwise: CI machines have no container engine.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setLogSilent } from '@cfs-batcher/shared';
import { checkImages } from '../../scripts/src/images-check';
import type { Engine } from '../../scripts/src/images-engine';
import { makeTempDir } from '../helpers/tmp';
import { ROOT } from './manifest-helpers';

const BUILD = path.join(ROOT, 'scripts', 'images', 'build.sh');

describe('npm run images (stub engines)', () => {
  const tmp = makeTempDir('images-build');
  afterAll(() => tmp.cleanup());

  /** A stub engine: records each call; `info` answers as told; `image inspect` prints a size. */
  function stubEngines(dir: string, working: string[]): string {
    const calls = path.join(dir, 'calls.log');
    for (const name of ['docker', 'podman', 'buildah']) {
      const f = path.join(dir, name);
      const infoCode = working.includes(name) ? 0 : 1;
      writeFileSync(
        f,
        `#!/bin/sh\necho "${name} $*" >> "${calls}"\n[ "$1" = info ] && exit ${infoCode}\n[ "$1" = image ] && { echo 123456789; exit 0; }\n[ "$1" = inspect ] && { echo 123456789; exit 0; }\nexit 0\n`,
      );
      chmodSync(f, 0o755);
    }
    return calls;
  }

  function runBuild(name: string, working: string[], env: Record<string, string>) {
    const dir = path.join(tmp.dir, name);
    execFileSync('mkdir', ['-p', dir]);
    const calls = stubEngines(dir, working);
    const r = spawnSync('bash', [BUILD], {
      env: { PATH: `${dir}:/usr/bin:/bin`, HOME: tmp.dir, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    let log = '';
    try {
      log = readFileSync(calls, 'utf8');
    } catch {
      /* no call */
    }
    const builds = log.split('\n').filter((l) => / (build|bud) /.test(l));
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, builds };
  }

  it('skips a docker client without a daemon, builds both with podman, the CA as a secret and the default bases', () => {
    const ca = path.join(tmp.dir, 'ca.pem');
    writeFileSync(ca, '');
    const r = runBuild('podman', ['podman', 'buildah'], { NODE_EXTRA_CA_CERTS: ca });
    expect(r.code).toBe(0);
    expect(r.builds).toEqual([
      `podman build --layers --isolation chroot --secret id=extra-ca,src=${ca} -f Dockerfile.batcher -t localhost/cfs-batcher:0.1.0 .`,
      `podman build --layers --isolation chroot --secret id=extra-ca,src=${ca} -f Dockerfile.sidecar -t localhost/cfs-batcher-health-sidecar:0.1.0 .`,
    ]);
    expect(r.stdout).toContain('localhost/cfs-batcher:0.1.0 built in');
    expect(r.stdout).toContain('123 MB');
  });

  it('prefers a working docker; base images and a registry mirror become build arguments; EXTRA_CA_CERTS= turns the CA off', () => {
    const r = runBuild('docker', ['docker', 'podman', 'buildah'], {
      NODE_EXTRA_CA_CERTS: '/nonexistent',
      EXTRA_CA_CERTS: '',
      BUILD_IMAGE: 'mirror/node:20',
      RUNTIME_IMAGE: 'mirror/distroless',
      NPM_REGISTRY: 'https://npm.mirror.invalid/',
      IMAGE_TAG: 't1',
    });
    expect(r.code).toBe(0);
    expect(r.builds[0]).toBe(
      'docker build --build-arg BUILD_IMAGE=mirror/node:20 --build-arg RUNTIME_IMAGE=mirror/distroless --build-arg NPM_REGISTRY=https://npm.mirror.invalid/ -f Dockerfile.batcher -t localhost/cfs-batcher:t1 .',
    );
  });

  it('falls back to buildah, and says so when no engine works', () => {
    expect(runBuild('buildah', ['buildah'], {}).builds[0]).toMatch(/^buildah bud --layers --isolation chroot -f Dockerfile.batcher /);
    const none = runBuild('none', [], {});
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no working docker, podman or buildah');
    expect(none.builds).toEqual([]);
  });
});

describe('Dockerfiles: the extra CA reaches npm only', () => {
  it.each(['Dockerfile.batcher', 'Dockerfile.sidecar'])('%s mounts the extra-ca secret on every npm ci and nowhere else', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/\\\n/g, ' ');
    const runs = text.split('\n').filter((l) => l.startsWith('RUN '));
    const npmCi = runs.filter((l) => /npm ci\b/.test(l));
    expect(npmCi.length).toBe(2);
    for (const l of npmCi) {
      expect(l).toContain('--mount=type=secret,id=extra-ca');
      expect(l).toMatch(/if \[ -s \/run\/secrets\/extra-ca \]; then export NODE_EXTRA_CA_CERTS=\/run\/secrets\/extra-ca; fi/);
    }
    expect(runs.filter((l) => !/npm ci\b/.test(l)).join('\n')).not.toContain('extra-ca');
    expect(text).not.toMatch(/^(COPY|ADD|ENV)\b.*(extra-ca|EXTRA_CA|NODE_EXTRA_CA_CERTS)/m);
  });
});

const IMAGES = { batcher: 'localhost/cfs-batcher:0.1.0', sidecar: 'localhost/cfs-batcher-health-sidecar:0.1.0' };

/** An engine holding both built images, or null (then the check is skipped). */
function engineWithImages(): Engine | null {
  for (const e of ['docker', 'podman'] as const) {
    const r = spawnSync(e, ['image', 'inspect', IMAGES.batcher, IMAGES.sidecar], { stdio: 'ignore', timeout: 20_000 });
    if (r.status === 0) return e;
  }
  return null;
}
const engine = engineWithImages();

(engine ? describe : describe.skip)(`the built images (${engine ?? 'no engine with both images'})`, () => {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));

  it('run read-only as uid 65532: serve their ports, share the heartbeat, node is PID 1 and exits 0 on SIGTERM', async () => {
    const report = await checkImages({ engine: engine!, batcherImage: IMAGES.batcher, sidecarImage: IMAGES.sidecar });
    expect(report.problems).toEqual([]);
    for (const c of [report.batcher, report.sidecar]) {
      expect(c).not.toBeNull();
      expect(c!.pidInContainer).toBe(1);
      // `stop --time 2` sends SIGTERM and SIGKILLs after 2 s: exit code 0 means node stopped by itself in time
      expect(c!.exitCode).toBe(0);
    }
  }, 180_000);
});
