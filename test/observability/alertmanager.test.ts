/**
 * The example Alertmanager route (manifests/components/monitoring/alertmanager-route.example.yaml): `amtool
 * check-config` accepts it, and `amtool config routes test` sends every alert of the PrometheusRule, with the labels
 * it really carries, to the receiver its severity calls for. amtool comes with Debian's prometheus-alertmanager;
 * without it these tests are skipped and listed at the end of the run (a failure under CI).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describeWithTool } from '../helpers/requires';
import { makeTempDir } from '../helpers/tmp';
import { REPO } from './promql';

const MONITORING = path.join(REPO, 'manifests', 'components', 'monitoring');
const EXAMPLE = path.join(MONITORING, 'alertmanager-route.example.yaml');
const RECEIVER_BY_SEVERITY: Record<string, string> = {
  critical: 'cfs-batcher-page',
  warning: 'cfs-batcher-ticket',
  info: 'cfs-batcher-ticket',
};

function amtool(args: string[]): { status: number | null; out: string; stdout: string } {
  const r = spawnSync('amtool', args, { encoding: 'utf8', timeout: 30_000 });
  if (r.error)
    throw new Error(
      `amtool could not run (${r.error.message}); install it (Debian: apt-get install prometheus-alertmanager)`,
    );
  return { status: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

const rules = YAML.parse(readFileSync(path.join(MONITORING, 'prometheusrule.yaml'), 'utf8')) as {
  spec: { groups: { rules: { alert?: string; labels?: Record<string, string> }[] }[] };
};
const alerts = rules.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert);

describeWithTool('amtool', 'example Alertmanager route', () => {
  test('amtool check-config accepts it', () => {
    const r = amtool(['check-config', EXAMPLE]);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  test('amtool check-config rejects a route to a receiver that does not exist (the check can fail)', () => {
    const tmp = makeTempDir('am');
    try {
      const broken = path.join(tmp.dir, 'broken.yaml');
      writeFileSync(broken, readFileSync(EXAMPLE, 'utf8').replace('receiver: cfs-batcher-page', 'receiver: nobody'));
      expect(amtool(['check-config', broken]).status).not.toBe(0);
    } finally {
      tmp.cleanup();
    }
  });

  test.each(alerts.map((a) => [a.alert!, a.labels?.severity ?? ''] as const))(
    '%s (%s) goes to its receiver',
    (alert, severity) => {
      const labels = [
        `alertname=${alert}`,
        `severity=${severity}`,
        'namespace=services',
        'pod=cfs-batcher-0',
        'job=cfs-batcher',
      ];
      const r = amtool(['config', 'routes', 'test', `--config.file=${EXAMPLE}`, ...labels]);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(RECEIVER_BY_SEVERITY[severity]);
    },
  );
});
