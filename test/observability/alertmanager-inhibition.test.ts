/**
 * The example Alertmanager configuration's inhibitions, in a real Alertmanager (Debian's prometheus-alertmanager):
 * alerts are POSTed to /api/v2/alerts with the labels the rules really give them (those promtool checks in
 * manifests/components/monitoring/alerts-tests), then GET /api/v2/alerts says which are inhibited (status.inhibitedBy).
 * Each case starts its own Alertmanager, so no case sees another's alerts. Skipped without it (listed at the end of
 * the run; a failure under CI).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describeWithTool } from '../helpers/requires';
import { waitFor } from '../helpers/wait';
import { ALERTMANAGER_BINARY, Alertmanager, type AmAlert } from './alertmanager-server';
import { REPO } from './promql';

const MONITORING = path.join(REPO, 'manifests', 'components', 'monitoring');
const EXAMPLE = path.join(MONITORING, 'alertmanager-route.example.yaml');
const TESTS_DIR = path.join(MONITORING, 'alerts-tests');

type Labels = Record<string, string>;

/** Every label set a promtool test expects a firing alert to carry, alertname included. */
function firingLabelSets(): Labels[] {
  const out: Labels[] = [];
  for (const file of readdirSync(TESTS_DIR).filter((f) => f.endsWith('.test.yaml'))) {
    const t = YAML.parse(readFileSync(path.join(TESTS_DIR, file), 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: { exp_labels?: Labels }[] }[] }[];
    };
    for (const g of t.tests)
      for (const c of g.alert_rule_test ?? [])
        for (const e of c.exp_alerts) out.push({ alertname: c.alertname, ...e.exp_labels });
  }
  return out;
}
const LABEL_SETS = firingLabelSets();

/**
 * The labels a rule really gives an alert (a promtool expectation that fits), placed on a namespace and pod of the
 * case. Only labels the expectation has are set: an alert without a namespace stays without one.
 */
function alert(alertname: string, where: { namespace?: string; pod?: string } = {}, fits?: (l: Labels) => boolean) {
  const found = LABEL_SETS.find((l) => l.alertname === alertname && (fits ? fits(l) : true));
  if (!found) throw new Error(`no promtool test expects ${alertname} to fire${fits ? ' with those labels' : ''}`);
  const labels = { ...found };
  for (const k of ['namespace', 'pod'] as const) if (labels[k] !== undefined && where[k]) labels[k] = where[k];
  return labels;
}

const key = (l: Labels): string => `${l.alertname} ${l.namespace ?? '-'}/${l.pod ?? l.job ?? '-'}`;

/** Posts the alerts, waits until every one is known and the expected ones are inhibited, returns inhibited keys. */
async function inhibitedAfterPosting(am: Alertmanager, alerts: Labels[], expected: Labels[]): Promise<string[]> {
  await am.post(alerts);
  const want = new Set(expected.map(key));
  let seen: AmAlert[] = [];
  try {
    await waitFor(
      async () => {
        seen = await am.alerts();
        const inhibited = new Set(seen.filter((a) => a.status.inhibitedBy.length > 0).map((a) => key(a.labels)));
        return seen.length === alerts.length && [...want].every((k) => inhibited.has(k));
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'the inhibitions to show' },
    );
  } catch {
    // fall through: the assertion below shows what Alertmanager did instead
  }
  return seen
    .filter((a) => a.status.inhibitedBy.length > 0)
    .map((a) => key(a.labels))
    .sort();
}

describeWithTool(ALERTMANAGER_BINARY, 'example Alertmanager configuration in a real Alertmanager: inhibitions', () => {
  let am: Alertmanager;
  beforeEach(async () => {
    am = new Alertmanager();
    await am.start(EXAMPLE);
  }, 30_000);
  afterEach(() => am.stop());

  test('a failing scrape target in a namespace inhibits the crash-loop echoes there, not in another namespace', async () => {
    const here = { namespace: 'services', pod: 'cfs-batcher-0' };
    const there = { namespace: 'staging', pod: 'cfs-batcher-0' };
    const source = alert('CfsBatcherMetricsTargetAbsent', here, (l) => l.namespace !== undefined);
    const echoes = [alert('CfsBatcherRestartingRepeatedly', here), alert('CfsBatcherLivenessFailing', here)];
    const elsewhere = alert('CfsBatcherRestartingRepeatedly', there);
    const inhibited = await inhibitedAfterPosting(am, [source, ...echoes, elsewhere], echoes);
    expect(inhibited).toEqual(echoes.map(key).sort());
  });

  test('no target at all (an alert absent() leaves without a namespace) inhibits every other batcher alert', async () => {
    const source = alert('CfsBatcherMetricsTargetAbsent', {}, (l) => l.namespace === undefined);
    expect(source.namespace).toBeUndefined();
    const others = [
      alert('CfsBatcherRestartingRepeatedly', { namespace: 'services', pod: 'cfs-batcher-0' }),
      alert('CfsBatcherHealthSidecarRestarting', { namespace: 'staging', pod: 'cfs-batcher-1' }),
    ];
    const inhibited = await inhibitedAfterPosting(am, [source, ...others], others);
    expect(inhibited).toEqual(others.map(key).sort());
  });

  test('CFS unreachable inhibits what the batcher cannot do meanwhile on its pod, and still pages itself', async () => {
    const pod = { namespace: 'services', pod: 'cfs-batcher-0' };
    const other = { namespace: 'services', pod: 'cfs-batcher-1' };
    const outage = alert('CfsBatcherCfsUnreachable', pod);
    expect(outage.severity).toBe('critical');
    const echoes = [
      alert('CfsBatcherNoSessionsWhilePending', pod),
      alert('CfsBatcherSessionCreatesFailing', pod),
      alert('CfsBatcherSessionsPendingInCfs', pod),
    ];
    // the same alert on a pod that reaches CFS is that pod's own trouble
    const unrelated = alert('CfsBatcherNoSessionsWhilePending', other);
    const inhibited = await inhibitedAfterPosting(am, [outage, ...echoes, unrelated], echoes);
    expect(inhibited).toEqual(echoes.map(key).sort());
  });

  test('a stale heartbeat inhibits failing liveness on the same pod only', async () => {
    const pod = { namespace: 'services', pod: 'cfs-batcher-0' };
    const source = alert('CfsBatcherHeartbeatStale', pod);
    const echo = alert('CfsBatcherLivenessFailing', pod);
    const otherPod = alert('CfsBatcherLivenessFailing', { namespace: 'services', pod: 'cfs-batcher-1' });
    const inhibited = await inhibitedAfterPosting(am, [source, echo, otherPod], [echo]);
    expect(inhibited).toEqual([key(echo)]);
  });

  test('an alert with no cause firing is not inhibited (the check can fail)', async () => {
    const alone = [
      alert('CfsBatcherRestartingRepeatedly', { namespace: 'services', pod: 'cfs-batcher-0' }),
      alert('CfsBatcherNoSessionsWhilePending', { namespace: 'services', pod: 'cfs-batcher-0' }),
    ];
    await am.post(alone);
    const seen = await waitFor(
      async () => {
        const a = await am.alerts();
        return a.length === alone.length && a;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: 'both alerts known' },
    );
    expect(seen.map((a) => [key(a.labels), a.status.inhibitedBy])).toEqual(
      expect.arrayContaining(alone.map((l) => [key(l), []])),
    );
  });
});
