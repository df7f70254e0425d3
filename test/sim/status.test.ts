import { computeStatus, type Component, type Configuration } from '@cfs-batcher/cfs-sim';
import { REPO_A, REPO_B, SHA_A, SHA_B } from './helpers';

const config: Configuration = {
  name: 'cfg',
  layers: [
    { clone_url: REPO_A, commit: SHA_A, playbook: 'site.yml' },
    { clone_url: REPO_B, commit: SHA_B }, // playbook falls back to default_playbook
  ],
};

const layer = (url: string, commit: string, status: string, playbook = 'site.yml') => ({
  clone_url: url,
  playbook,
  commit,
  status,
  session_name: 's',
  last_updated: '2024-01-01T00:00:00Z',
});
const okA = layer(REPO_A, SHA_A, 'applied');
const okB = layer(REPO_B, SHA_B, 'applied');

function comp(extra: Partial<Component>): Component {
  return { id: 'x1', desired_config: 'cfg', error_count: 0, enabled: true, state: [], ...extra };
}

describe('computeStatus, as the real server computes configuration_status', () => {
  const cases: Array<[string, Component, Configuration | undefined, Record<string, unknown>, string, string[]]> = [
    ['no desired_config key: legacy record', { id: 'x1', state: [] }, config, {}, 'config_deprecated', []],
    ['missing configuration, empty state', comp({ desired_config: 'nope' }), undefined, {}, 'unconfigured', []],
    [
      'missing configuration, some state',
      comp({ desired_config: 'nope', state: [okA] }),
      undefined,
      {},
      'configured',
      [],
    ],
    ['empty desired_config, empty state', comp({ desired_config: '' }), undefined, {}, 'unconfigured', []],
    ['nothing applied yet', comp({}), config, {}, 'pending', ['pending', 'pending']],
    ['all applied', comp({ state: [okA, okB] }), config, {}, 'configured', ['configured', 'configured']],
    [
      'skipped counts as configured',
      comp({ state: [okA, layer(REPO_B, SHA_B, 'skipped')] }),
      config,
      {},
      'configured',
      ['configured', 'configured'],
    ],
    [
      'commit changed: layer pending again',
      comp({ state: [layer(REPO_A, 'c'.repeat(40), 'applied'), okB] }),
      config,
      {},
      'pending',
      ['pending', 'configured'],
    ],
    [
      'playbook mismatch: layer pending',
      comp({ state: [layer(REPO_A, SHA_A, 'applied', 'other.yml'), okB] }),
      config,
      {},
      'pending',
      ['pending', 'configured'],
    ],
    [
      'default_playbook option used for a layer without playbook',
      comp({ state: [okA, layer(REPO_B, SHA_B, 'applied', 'x.yml')] }),
      config,
      { default_playbook: 'x.yml' },
      'configured',
      ['configured', 'configured'],
    ],
    [
      'failed below retries: pending',
      comp({ error_count: 0, state: [layer(REPO_A, SHA_A, 'failed'), okB] }),
      config,
      {},
      'pending',
      ['pending', 'configured'],
    ],
    [
      'failed at retries (server fallback 1): failed',
      comp({ error_count: 1, state: [layer(REPO_A, SHA_A, 'failed'), okB] }),
      config,
      {},
      'failed',
      ['failed', 'configured'],
    ],
    [
      'failed, option retry policy 3 not reached',
      comp({ error_count: 2, state: [layer(REPO_A, SHA_A, 'failed'), okB] }),
      config,
      { default_batcher_retry_policy: 3 },
      'pending',
      ['pending', 'configured'],
    ],
    [
      'component retry_policy wins over option',
      comp({ error_count: 2, retry_policy: 2, state: [layer(REPO_A, SHA_A, 'failed'), okB] }),
      config,
      { default_batcher_retry_policy: 5 },
      'failed',
      ['failed', 'configured'],
    ],
    [
      'retry_policy -1 is unlimited',
      comp({ error_count: 99, retry_policy: -1, state: [layer(REPO_A, SHA_A, 'failed'), okB] }),
      config,
      {},
      'pending',
      ['pending', 'configured'],
    ],
    [
      'incomplete is pending',
      comp({ state: [layer(REPO_A, SHA_A, 'incomplete'), okB] }),
      config,
      {},
      'pending',
      ['pending', 'configured'],
    ],
    ['pending + max retries reached => failed', comp({ error_count: 1 }), config, {}, 'failed', ['pending', 'pending']],
    [
      'source layer without clone_url: unconfigured wins',
      comp({ state: [okA, okB] }),
      { name: 'cfg', layers: [{ source: 'src', commit: SHA_A, playbook: 'site.yml' }, config.layers[0]!] },
      {},
      'unconfigured',
      ['unconfigured', 'configured'],
    ],
    [
      'layer without commit: unconfigured',
      comp({}),
      { name: 'cfg', layers: [{ clone_url: REPO_A, playbook: 'site.yml' }] },
      {},
      'unconfigured',
      ['unconfigured'],
    ],
    [
      'worst layer wins: failed beats pending',
      comp({ error_count: 1, retry_policy: 1, state: [layer(REPO_A, SHA_A, 'failed')] }),
      config,
      {},
      'failed',
      ['failed', 'pending'],
    ],
    ['empty configuration: configured', comp({}), { name: 'cfg', layers: [] }, {}, 'configured', []],
  ];
  it.each(cases)('%s', (_name, c, cfg, opts, status, layers) => {
    const out = computeStatus(c, cfg, opts);
    expect(out.status).toBe(status);
    expect(out.layers).toEqual(layers);
  });
});
