/**
 * `npm run images` and the image check. The build runs against stub engines on PATH (which engine it picks, what it
 * passes); the check runs the real images when an engine and both built images are on this machine (`npm run
 * images`, see docs/deployment.md#images), and is skipped and listed at the end of the run otherwise. .ci/run
 * builds them first (podman, runc, mmdebstrap), so under CI their absence is a failure.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setLogSilent } from '@cfs-batcher/shared';
import { checkImages } from '../../scripts/src/images-check';
import type { Engine } from '../../scripts/src/images-engine';
import { main } from '../../scripts/src/images';
import { describeWith } from '../helpers/requires';
import { makeTempDir } from '../helpers/tmp';
import { ROOT } from './manifest-helpers';

describe('npm run images (stub engines on PATH)', () => {
  const tmp = makeTempDir('images-build');
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
    jest.restoreAllMocks();
  });
  afterAll(() => tmp.cleanup());

  /** Stub engines in their own folder: each records its calls; `info` answers as told; sizes are 123456789 bytes. */
  function stubEngines(name: string, working: string[]): string {
    const dir = path.join(tmp.dir, name);
    mkdirSync(dir, { recursive: true });
    const calls = path.join(dir, 'calls.log');
    writeFileSync(calls, '');
    for (const e of ['docker', 'podman', 'buildah']) {
      const size = e === 'buildah' ? '[{"size": "123 MB"}]' : '123456789';
      const info = working.includes(e) ? 0 : 1;
      const script = `#!/bin/sh\necho "${e} $*" >> "${calls}"\ncase "$1" in info) exit ${info} ;; image|images) echo '${size}' ;; esac\nexit 0\n`;
      writeFileSync(path.join(dir, e), script);
      chmodSync(path.join(dir, e), 0o755);
    }
    process.env.PATH = `${dir}:/usr/bin:/bin`;
    return calls;
  }

  async function runImages(name: string, working: string[], env: NodeJS.ProcessEnv) {
    const calls = stubEngines(name, working);
    const out: string[] = [];
    const err: string[] = [];
    jest.spyOn(console, 'log').mockImplementation((l: string) => void out.push(l));
    jest.spyOn(console, 'error').mockImplementation((l: string) => void err.push(l));
    const code = await main([], env);
    const builds = readFileSync(calls, 'utf8')
      .split('\n')
      .filter((l) => / (build|bud) /.test(l));
    return { code, out: out.join('\n'), err: err.join('\n'), builds };
  }

  it('skips a docker client without a daemon, builds both with podman, the CA as a secret and the default bases', async () => {
    const ca = path.join(tmp.dir, 'ca.pem');
    writeFileSync(ca, '');
    const r = await runImages('podman', ['podman', 'buildah'], { NODE_EXTRA_CA_CERTS: ca });
    expect(r.code).toBe(0);
    expect(r.builds).toEqual([
      `podman build --layers --isolation chroot --secret id=extra-ca,src=${ca} -f Dockerfile.batcher -t localhost/cfs-batcher:0.1.0 .`,
      `podman build --layers --isolation chroot --secret id=extra-ca,src=${ca} -f Dockerfile.sidecar -t localhost/cfs-batcher-health-sidecar:0.1.0 .`,
    ]);
    expect(r.out).toMatch(/Dockerfile.batcher localhost\/cfs-batcher:0.1.0 built in [\d.]+ s, 123 MB/);
  });

  it('prefers a working docker; bases and a registry mirror become build arguments; EXTRA_CA_CERTS= turns the CA off', async () => {
    const env = {
      NODE_EXTRA_CA_CERTS: '/nonexistent',
      EXTRA_CA_CERTS: '',
      BUILD_IMAGE: 'mirror/node:24',
      RUNTIME_IMAGE: 'mirror/distroless',
      NPM_REGISTRY: 'https://npm.mirror.invalid/',
      IMAGE_TAG: 't1',
    };
    const r = await runImages('docker', ['docker', 'podman', 'buildah'], env);
    expect(r.code).toBe(0);
    expect(r.builds[0]).toBe(
      'docker build --build-arg BUILD_IMAGE=mirror/node:24 --build-arg RUNTIME_IMAGE=mirror/distroless --build-arg NPM_REGISTRY=https://npm.mirror.invalid/ -f Dockerfile.batcher -t localhost/cfs-batcher:t1 .',
    );
  });

  it('falls back to buildah (sizes from its human-readable form), and says so when no engine works or the CA is unreadable', async () => {
    const b = await runImages('buildah', ['buildah'], {});
    expect(b.builds[0]).toBe(
      'buildah bud --layers --isolation chroot -f Dockerfile.batcher -t localhost/cfs-batcher:0.1.0 .',
    );
    expect(b.out).toContain('123 MB');
    const none = await runImages('none', [], {});
    expect(none.code).toBe(1);
    expect(none.err).toContain('no working docker, podman or buildah');
    expect(none.builds).toEqual([]);
    const ca = await runImages('ca', ['podman'], { EXTRA_CA_CERTS: path.join(tmp.dir, 'missing.pem') });
    expect(ca.code).toBe(1);
    expect(ca.err).toContain('is not readable');
    expect(ca.builds).toEqual([]);
  });
});

describe('Dockerfiles: the extra CA reaches npm only', () => {
  it.each(['Dockerfile.batcher', 'Dockerfile.sidecar'])(
    '%s mounts the extra-ca secret on every npm ci and nowhere else',
    (file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/\\\n/g, ' ');
      const runs = text.split('\n').filter((l) => l.startsWith('RUN '));
      const npmCi = runs.filter((l) => /npm ci\b/.test(l));
      expect(npmCi.length).toBe(2);
      for (const l of npmCi) {
        expect(l).toContain('--mount=type=secret,id=extra-ca');
        expect(l).toMatch(
          /if \[ -s \/run\/secrets\/extra-ca \]; then export NODE_EXTRA_CA_CERTS=\/run\/secrets\/extra-ca; fi/,
        );
      }
      expect(runs.filter((l) => !/npm ci\b/.test(l)).join('\n')).not.toContain('extra-ca');
      expect(text).not.toMatch(/^(COPY|ADD|ENV)\b.*(extra-ca|EXTRA_CA|NODE_EXTRA_CA_CERTS)/m);
    },
  );
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

const builtImages = {
  what: 'the built images',
  missing: engine ? undefined : `no docker or podman here holds ${IMAGES.batcher} and ${IMAGES.sidecar}`,
  enable: 'npm run images -- --standin (podman, runc and mmdebstrap: apt-get install podman runc mmdebstrap)',
};

describeWith(builtImages, `the built images (${engine ?? 'none'})`, () => {
  beforeAll(() => setLogSilent(true));
  afterAll(() => setLogSilent(false));

  it('run read-only as uid 65532: serve their ports, share the heartbeat, node is PID 1 and exits 0 on SIGTERM', async () => {
    const report = await checkImages({ engine: engine!, batcherImage: IMAGES.batcher, sidecarImage: IMAGES.sidecar });
    expect(report.problems).toEqual([]);
    for (const c of [report.batcher, report.sidecar]) {
      expect(c).not.toBeNull();
      expect(c!.pidInContainer).toBe(1);
      expect(c!.uid).toBe(65532);
      // `stop --time 2` sends SIGTERM and SIGKILLs after 2 s: exit code 0 means node stopped by itself in time
      expect(c!.exitCode).toBe(0);
    }
  }, 180_000);

  it("fails when an image does not do its job (the batcher image in the sidecar's place never serves /healthz)", async () => {
    const report = await checkImages({
      engine: engine!,
      batcherImage: IMAGES.batcher,
      sidecarImage: IMAGES.batcher,
      deadlineMs: 5000,
    });
    expect(report.problems).toEqual([expect.stringContaining('sidecar /healthz')]);
    expect(report.sidecar).toBeNull();
  }, 120_000);
});
