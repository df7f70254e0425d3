/**
 * The local pod: its pure parts (arguments, env from the manifest, manifest parsing), and one short end-to-end run
 * of the built program (`--duration --quiet --free-ports`) that must configure components in batches.
 */
import { spawn } from 'node:child_process';
import { UsageError, parseArgs } from '../../scripts/src/local-pod';
import { containerEnv, expandVars } from '../../scripts/src/pod-env';
import { ManifestError, parseManifestText, type ContainerSpec } from '../../scripts/src/pod-spec';
import { ROOT } from './manifest-helpers';
import { requireBuilt } from '../helpers/built';

describe('local pod arguments', () => {
  it('parses the documented options', () => {
    expect(parseArgs(['--duration', '20', '--quiet', '--free-ports', '--check-interval', '3'])).toMatchObject({
      durationS: 20,
      quiet: true,
      freePorts: true,
      checkInterval: 3,
      batchWindow: 5,
    });
  });
  it.each([[['--duration']], [['--duration', 'x']], [['--bogus']], [['--check-interval', '0']]])(
    'rejects %j',
    (argv) => {
      expect(() => parseArgs(argv)).toThrow(UsageError);
    },
  );
});

describe('container env from the manifest', () => {
  const c: ContainerSpec = {
    name: 'cfs-batcher',
    env: [
      { name: 'CONTAINER_NAME', value: 'cfs-batcher' },
      { name: 'CFS_API_URL', value: 'http://cray-cfs-api/v3' },
      { name: 'CA_CERT', value: '/mnt/ca-vol/certificate_authority.crt' },
      {
        name: 'OTEL_RESOURCE_ATTRIBUTES',
        value: 'k8s.pod.name=$(POD_NAME),k8s.container.name=$(CONTAINER_NAME),x=$(UNSET),y=$$(POD_NAME)',
      },
    ],
    fieldRefs: [{ name: 'POD_NAME', fieldPath: 'metadata.name' }],
    ports: {},
    probes: { podTerminationGracePeriodSeconds: 30 },
    limits: {},
  };

  it('resolves downward-API fields and $(VAR) references like the kubelet, then applies local overrides', () => {
    const env = containerEnv(
      c,
      { podName: 'p1', namespace: 'ns' },
      { CFS_API_URL: 'http://127.0.0.1:1/v3', CA_CERT: undefined },
      { PATH: '/bin', SECRET: 'x' },
    );
    expect(env.OTEL_RESOURCE_ATTRIBUTES).toBe(
      'k8s.pod.name=p1,k8s.container.name=cfs-batcher,x=$(UNSET),y=$(POD_NAME)',
    );
    expect(env.CFS_API_URL).toBe('http://127.0.0.1:1/v3');
    expect(env).not.toHaveProperty('CA_CERT');
    expect(env.PATH).toBe('/bin');
    expect(env).not.toHaveProperty('SECRET'); // the host env does not leak in
  });

  it('expandVars leaves unknown references alone', () => {
    expect(expandVars('$(A)-$(B)', { A: '1' })).toBe('1-$(B)');
  });
});

describe('manifest parsing', () => {
  const doc = (probe: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: { name: cfs-batcher }
spec:
  template:
    spec:
      containers:
        - name: cfs-batcher
          ${probe}
        - name: health-sidecar
          ports: [{ name: health, containerPort: 8081 }]
          livenessProbe: { httpGet: { path: /healthz, port: health } }
`;
  it('applies the Kubernetes defaults and resolves named ports in the probed container', () => {
    const pod = parseManifestText(doc('livenessProbe: { httpGet: { path: /livez, port: 8081 } }'), 't');
    expect(pod.podTerminationGracePeriodSeconds).toBe(30);
    expect(pod.containers['cfs-batcher']!.probes.liveness).toEqual({
      path: '/livez',
      port: 8081,
      initialDelaySeconds: 0,
      periodSeconds: 10,
      timeoutSeconds: 1,
      failureThreshold: 3,
      successThreshold: 1,
    });
    expect(pod.containers['health-sidecar']!.probes.liveness?.port).toBe(8081);
  });
  it('rejects what the kubelet would not resolve', () => {
    // "health" is a port of the sidecar, not of the batcher: the kubelet would not find it either
    expect(() => parseManifestText(doc('livenessProbe: { httpGet: { path: /livez, port: health } }'), 't')).toThrow(
      ManifestError,
    );
    expect(() => parseManifestText(doc('livenessProbe: { exec: { command: [true] } }'), 't')).toThrow(/only httpGet/);
    expect(() => parseManifestText(doc('livenessProbe: { httpGet: { port: 1 }, periodSeconds: "10" }'), 't')).toThrow(
      /periodSeconds/,
    );
  });
});

describe('npm start (built local pod)', () => {
  beforeAll(() => {
    requireBuilt(
      ...['scripts', 'cfs-sim', 'batcher', 'sidecar-health'].map(
        (p) => `${p}/dist/${p === 'scripts' ? 'local-pod' : 'main'}.js`,
      ),
    );
  });

  it('runs the pod, configures components in batches, and stops cleanly', async () => {
    const child = spawn(
      process.execPath,
      ['scripts/dist/local-pod.js', '--duration', '30', '--quiet', '--free-ports'],
      {
        cwd: ROOT,
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.once('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect({ code, tail: code === 0 ? '' : out.slice(-3000) }).toEqual({ code: 0, tail: '' });
    const line = out.split('\n').find((l) => l.startsWith('local-pod summary '));
    expect(line).toBeDefined();
    const summary = JSON.parse(line!.slice('local-pod summary '.length)) as {
      components: Record<string, number>;
      batcherRestarts: number;
      sessionsCreated: number | null;
    };
    expect(summary.sessionsCreated).toBeGreaterThanOrEqual(1);
    expect(summary.components.configured ?? 0).toBeGreaterThan(0);
    expect(summary.batcherRestarts).toBe(0);
    expect(out).toMatch(/cfs-batcher: started pid \d+/);
    // One explain answer for the demo node, with the command that gives it.
    expect(out).toMatch(
      /explain {6}x3000c0s1b0n0: [A-Z][^\n]*\. {3}\(node batcher\/dist\/explain\.js x3000c0s1b0n0 --url /,
    );
  }, 120_000);
});
