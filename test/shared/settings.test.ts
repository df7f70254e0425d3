/** Settings schemas, unknown and misspelled variables, strict log levels and the pure start-up judgements. */
import {
  ConfigError,
  closestSetting,
  defineSettings,
  editDistance,
  intSetting,
  isServiceLink,
  judgeCfsBase,
  logLevelSetting,
  platformVariable,
  refuseUnknownSettings,
  scopeOf,
  unknownSettings,
  type SettingsScope,
} from '@cfs-batcher/shared';
import { BATCHER_SETTINGS, loadConfig, wantsBatcherHelp } from '@cfs-batcher/batcher';
import { SIDECAR_SETTINGS, configFromEnv, parseSidecarArgs } from '@cfs-batcher/sidecar-health';
import { CSM_POD_ENV } from '../helpers/csm-pod-env';

const BATCHER = scopeOf(BATCHER_SETTINGS);

describe('the settings schemas', () => {
  it('the batcher and the sidecar know exactly the settings they declare, aliases included', () => {
    expect(BATCHER_SETTINGS.known).toEqual(
      expect.arrayContaining(['CFS_API_URL', 'CFS_REQUEST_TIMEOUT_MS', 'LOG_LEVEL', 'STARTING_CFS_LOG_LEVEL']),
    );
    expect(BATCHER_SETTINGS.known).not.toContain('SIDECAR_FRESHNESS_SECONDS');
    expect(SIDECAR_SETTINGS.known).toEqual(
      expect.arrayContaining(['CFS_API_URL', 'SIDECAR_FRESHNESS_SECONDS', 'HEALTH_PORT', 'LOG_LEVEL']),
    );
    expect(SIDECAR_SETTINGS.known).not.toContain('BATCHER_PENDING_SESSIONS_CAP');
  });

  it('every setting says what it does and why a site changes it', () => {
    for (const schema of [BATCHER_SETTINGS, SIDECAR_SETTINGS]) {
      for (const s of Object.values(schema.settings)) {
        expect(s.meaning.length).toBeGreaterThan(5);
        expect(s.reason.length).toBeGreaterThan(5);
      }
    }
  });

  it('reads defaults, values and refuses a bad value naming the variable', () => {
    const demo = defineSettings({
      program: 'demo',
      prefixes: ['DEMO_'],
      settings: {
        DEMO_SIZE: { schema: intSetting(1, 10), default: '3', meaning: 'size', reason: 'why not' },
        DEMO_LEVEL: { schema: logLevelSetting(), default: 'INFO', meaning: 'l', reason: 'r', aliases: ['OLD_LEVEL'] },
      },
    });
    expect(demo.parse({})).toEqual({ DEMO_SIZE: 3, DEMO_LEVEL: 'INFO' });
    expect(demo.parse({ DEMO_SIZE: ' 7 ', OLD_LEVEL: 'debug' })).toEqual({ DEMO_SIZE: 7, DEMO_LEVEL: 'DEBUG' });
    // the declared name wins over its alias
    expect(demo.parse({ DEMO_LEVEL: 'error', OLD_LEVEL: 'debug' }).DEMO_LEVEL).toBe('ERROR');
    expect(() => demo.parse({ DEMO_SIZE: '11' })).toThrow(new ConfigError('DEMO_SIZE=11 is outside 1..10'));
    expect(() => demo.parse({ DEMO_SIZE: 'x' })).toThrow(new ConfigError('DEMO_SIZE="x" is not an integer'));
    expect(() => demo.parse({ OLD_LEVEL: 'loud' })).toThrow(/^OLD_LEVEL="loud" is not a log level/);
  });

  it('the batcher takes LOG_LEVEL and the original STARTING_CFS_LOG_LEVEL; LOG_LEVEL wins', () => {
    expect(loadConfig({}).startingLogLevel).toBe('INFO');
    expect(loadConfig({ LOG_LEVEL: 'DEBUG' }).startingLogLevel).toBe('DEBUG');
    expect(loadConfig({ STARTING_CFS_LOG_LEVEL: 'ERROR' }).startingLogLevel).toBe('ERROR');
    expect(loadConfig({ LOG_LEVEL: 'debug', STARTING_CFS_LOG_LEVEL: 'ERROR' }).startingLogLevel).toBe('DEBUG');
  });
});

describe('editDistance and closestSetting', () => {
  it.each([
    ['CFS_REQUEST_TIMEOUT_MSS', 'CFS_REQUEST_TIMEOUT_MS', 1],
    ['METRICS_PROT', 'METRICS_PORT', 1],
    ['HEARTBEAT_PAHT', 'HEARTBEAT_PATH', 1],
    ['abc', 'abc', 0],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s -> %s is %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it('finds the nearest known name, case ignored', () => {
    expect(closestSetting('SIDECAR_FRESHNES_SECONDS', SIDECAR_SETTINGS.known)).toBe('SIDECAR_FRESHNESS_SECONDS');
    expect(closestSetting('cfs_api_url', BATCHER_SETTINGS.known)).toBe('CFS_API_URL');
    expect(closestSetting('X', [])).toBeUndefined();
  });
});

describe('Kubernetes service links', () => {
  it.each([
    ['CFS_BATCHER_SERVICE_HOST', '10.0.0.1'],
    ['CFS_BATCHER_SERVICE_PORT', '9088'],
    ['CFS_BATCHER_SERVICE_PORT_METRICS', '9088'],
    ['CFS_BATCHER_PORT', 'tcp://10.0.0.1:9088'],
    ['CFS_BATCHER_PORT_9088_TCP', 'tcp://10.0.0.1:9088'],
    ['CFS_BATCHER_PORT_9088_TCP_PROTO', 'tcp'],
    ['CFS_BATCHER_PORT_9088_TCP_PORT', '9088'],
    ['CFS_BATCHER_PORT_9088_TCP_ADDR', '10.0.0.1'],
    ['SIDECAR_X_PORT_53_UDP', 'udp://10.0.0.2:53'],
  ])('%s=%s is a service link', (name, value) => {
    expect(isServiceLink(name, value)).toBe(true);
    expect(unknownSettings({ [name]: value }, { ...BATCHER, prefixes: ['CFS_', 'SIDECAR_'] })).toEqual([]);
  });

  it('a *_PORT variable that does not hold a service address is not one', () => {
    expect(isServiceLink('BATCHER_METRICS_PORT', '9088')).toBe(false);
    expect(unknownSettings({ BATCHER_METRICS_PORT: '9088' }, BATCHER)).toEqual([
      { name: 'BATCHER_METRICS_PORT', closest: expect.any(String) },
    ]);
  });
});

describe('refuseUnknownSettings', () => {
  const scope: SettingsScope = { program: 'demo', prefixes: ['DEMO_'], known: ['DEMO_SIZE', 'DEMO_URL'] };

  it('passes known names, names without the prefixes and unset variables', () => {
    expect(() =>
      refuseUnknownSettings({ DEMO_SIZE: '1', PATH: '/bin', OTHER_X: 'y', DEMO_GONE: undefined }, scope),
    ).not.toThrow();
  });

  it('names every unknown variable and its closest setting in one ConfigError', () => {
    expect(() => refuseUnknownSettings({ DEMO_SIZ: '1', DEMO_UR: 'x' }, scope)).toThrow(
      new ConfigError(
        'DEMO_SIZ is not a demo setting (did you mean DEMO_SIZE?); DEMO_UR is not a demo setting (did you mean DEMO_URL?); ' +
          'the demo refuses unknown DEMO_* variables and misspelled settings: fix the name or unset it',
      ),
    );
  });

  it('a name far from every setting gets the closest as a pointer, not as a guess', () => {
    expect(() => refuseUnknownSettings({ DEMO_LOG_LEVEL: 'x' }, scope)).toThrow(
      /DEMO_LOG_LEVEL is not a demo setting \(the closest setting is DEMO_[A-Z]+; --help lists them all\)/,
    );
  });

  it('the batcher refuses before reading values, the wrapper may add its own names', () => {
    expect(() => loadConfig({ BATCHER_PENDING_SESSION_CAP: 'x' })).toThrow(
      /BATCHER_PENDING_SESSION_CAP is not a batcher setting \(did you mean BATCHER_PENDING_SESSIONS_CAP\?\)/,
    );
    expect(() => loadConfig({ BATCHER_TEST_FAULT: 'throw' }, ['BATCHER_TEST_FAULT'])).not.toThrow();
    expect(() => configFromEnv({ SIDECAR_FRESHNES_SECONDS: '3' })).toThrow(/did you mean SIDECAR_FRESHNESS_SECONDS/);
    // each container owns its prefixes: a sidecar setting on the batcher is not the batcher's business
    expect(() => loadConfig({ SIDECAR_FRESHNESS_SECONDS: '3' })).not.toThrow();
  });
});

describe('a realistic CSM pod environment', () => {
  it.each([
    ['batcher', () => loadConfig(CSM_POD_ENV)],
    ['sidecar', () => configFromEnv(CSM_POD_ENV)],
  ])('the %s starts with it', (_name, load) => {
    expect(load).not.toThrow();
  });

  it('each of its variables is a platform variable', () => {
    expect(Object.keys(CSM_POD_ENV).filter((n) => !platformVariable(n, CSM_POD_ENV[n]))).toEqual([]);
  });

  it.each([
    ['LOG_LEVLE', 'LOG_LEVEL'],
    ['METRICS_PROT', 'METRICS_PORT'],
    ['HEARTBEAT_PAHT', 'HEARTBEAT_PATH'],
    ['STARTING_CFS_LOG_LEVLE', 'STARTING_CFS_LOG_LEVEL'],
    ['CA_CRET', 'CA_CERT'],
  ])('but a misspelled setting among them, %s, is refused naming %s', (typo, meant) => {
    expect(() => loadConfig({ ...CSM_POD_ENV, [typo]: 'x' })).toThrow(
      new RegExp(`^${typo} is not a batcher setting \\(did you mean ${meant}\\?\\)`),
    );
  });

  it('a former setting is refused saying what replaced it', () => {
    expect(() => loadConfig({ BATCHER_PAGE_SIZE: '500' })).toThrow(
      /^BATCHER_PAGE_SIZE is not a batcher setting any more \(a constant of batcher\/src\/config.ts/,
    );
    expect(() => configFromEnv({ SIDECAR_EVAL_INTERVAL_MS: '250' })).toThrow(
      /^SIDECAR_EVAL_INTERVAL_MS is not a sidecar setting any more \(a constant, 1000 ms\)/,
    );
  });
});

describe('log levels', () => {
  const levels = defineSettings({
    program: 'demo',
    prefixes: [],
    settings: { LOG_LEVEL: { schema: logLevelSetting(), default: 'INFO', meaning: 'm', reason: 'r' } },
  });
  it.each([
    ['debug', 'DEBUG'],
    [' Warning ', 'WARNING'],
    ['warn', 'WARNING'],
    ['critical', 'ERROR'],
    ['', 'INFO'],
  ])('%j -> %s', (raw, level) => {
    expect(levels.parse({ LOG_LEVEL: raw }).LOG_LEVEL).toBe(level);
  });

  it.each(['verbose', 'trace', 'info,debug', '1'])('%j is refused naming the variable and the levels', (raw) => {
    const shown = /^-?\d+$/.test(raw) ? raw : JSON.stringify(raw);
    expect(() => levels.parse({ LOG_LEVEL: raw })).toThrow(
      new ConfigError(`LOG_LEVEL=${shown} is not a log level (one of DEBUG, INFO, WARNING, ERROR)`),
    );
  });
});

describe('judgeCfsBase', () => {
  const base = 'http://x/apis/cfs';
  it('is fatal only when base + /v3 answers with the options', () => {
    expect(judgeCfsBase(base, 'not-found', 'options')).toEqual({
      level: 'fatal',
      line: 'CFS_API_URL=http://x/apis/cfs answers 404 for GET /options while http://x/apis/cfs/v3 answers it: did you mean CFS_API_URL=http://x/apis/cfs/v3?',
    });
    for (const atV3 of ['not-found', 'other'] as const) {
      const f = judgeCfsBase(base, 'not-found', atV3);
      expect(f?.level).toBe('error');
      expect(f?.line).toContain('did you mean http://x/apis/cfs/v3?');
    }
  });

  it('a 404 on a /v3 base is an error (an outage may look like that), never fatal', () => {
    const f = judgeCfsBase('https://gw/apis/cfs/v3/', 'not-found');
    expect(f?.level).toBe('error');
    expect(f?.line).toContain('is it the CFS v3 API');
  });

  it('no answer: silent on a /v3 base, a warning on one without', () => {
    expect(judgeCfsBase('http://cray-cfs-api/v3', 'other')).toBeNull();
    expect(judgeCfsBase(base, 'other')?.level).toBe('warn');
    expect(judgeCfsBase(base, 'options')).toBeNull();
  });
});

describe('command lines', () => {
  it('the batcher takes --help and nothing else', () => {
    expect(wantsBatcherHelp([])).toBe(false);
    expect(wantsBatcherHelp(['--help'])).toBe(true);
    expect(wantsBatcherHelp(['-h'])).toBe(true);
    expect(() => wantsBatcherHelp(['serve'])).toThrow(ConfigError);
    expect(() => wantsBatcherHelp(['--verbose'])).toThrow(/Unknown option '--verbose'/);
  });

  it.each([
    [[], { kind: 'serve' }],
    [['serve'], { kind: 'serve' }],
    [['--help'], { kind: 'help' }],
    [['check', '-h'], { kind: 'help' }],
    [['check'], { kind: 'check', check: 'live', standalone: false }],
    [['check', 'startup', '--standalone'], { kind: 'check', check: 'startup', standalone: true }],
    [['check', '--standalone', 'live'], { kind: 'check', check: 'live', standalone: true }],
  ])('sidecar %j', (argv, command) => {
    expect(parseSidecarArgs(argv)).toEqual(command);
  });

  it.each([[['check', 'bogus']], [['check', 'live', 'startup']], [['bogus']], [['serve', 'x']], [['--frob']]])(
    'sidecar %j is refused with the usage',
    (argv) => {
      expect(() => parseSidecarArgs(argv)).toThrow(/\(usage: main\.js \[serve\] \| main\.js check/);
    },
  );
});
