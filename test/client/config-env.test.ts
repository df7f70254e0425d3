/**
 * Settings the CFS client reads at start (refused with a ConfigError that names the variable) and the token file it
 * re-reads on every call (an unreadable file is one ERROR per change of state, not one per request).
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CFS_CLIENT_DEFAULTS,
  CfsClient,
  ConfigError,
  addLogSink,
  setLogSilent,
  startFailure,
} from '@cfs-batcher/shared';
import { loadConfig } from '@cfs-batcher/batcher';

/** The CFS client options the batcher's settings give. */
const cfsClientOptionsFromEnv = (env: NodeJS.ProcessEnv) => loadConfig(env).cfs;
import { json, startFakeServer, type FakeServer } from './fake-server';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    cfsClientOptionsFromEnv(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return startFailure(err)!.line;
  }
  throw new Error('expected a ConfigError');
}

describe('the CFS connection settings', () => {
  it('uses the shared defaults when nothing is set', () => {
    expect(cfsClientOptionsFromEnv({})).toEqual({
      baseUrl: CFS_CLIENT_DEFAULTS.baseUrl,
      connectTimeoutMs: CFS_CLIENT_DEFAULTS.connectTimeoutMs,
      requestTimeoutMs: CFS_CLIENT_DEFAULTS.requestTimeoutMs,
      retryBudgetMs: CFS_CLIENT_DEFAULTS.retryBudgetMs,
      caCertPath: undefined,
      tokenFile: undefined,
    });
  });

  it.each([
    [{ CFS_API_URL: 'not a url' }, 'Configuration error: CFS_API_URL="not a url" is not a URL'],
    [
      { CFS_API_URL: 'file:///etc/passwd' },
      'Configuration error: CFS_API_URL="file:///etc/passwd" is not an http or https URL',
    ],
    [{ CFS_REQUEST_TIMEOUT_MS: '1.5' }, 'Configuration error: CFS_REQUEST_TIMEOUT_MS="1.5" is not an integer'],
    [{ CFS_REQUEST_TIMEOUT_MS: '0' }, 'Configuration error: CFS_REQUEST_TIMEOUT_MS=0 is outside 1..600000'],
    // above 2^31-1 ms Node fires a timer at once: every call would time out
    [
      { CFS_REQUEST_TIMEOUT_MS: '2147483648' },
      'Configuration error: CFS_REQUEST_TIMEOUT_MS=2147483648 is outside 1..600000',
    ],
    [{ CFS_RETRY_BUDGET_MS: '86400000' }, 'Configuration error: CFS_RETRY_BUDGET_MS=86400000 is outside 0..600000'],
    [{ CA_CERT: '/nonexistent/ca.crt' }, 'Configuration error: CA_CERT="/nonexistent/ca.crt" cannot be read (ENOENT)'],
    [
      { CFS_TOKEN_FILE: '/nonexistent/token' },
      'Configuration error: CFS_TOKEN_FILE="/nonexistent/token" cannot be read (ENOENT)',
    ],
  ])('refuses %j', (env, line) => {
    expect(configError(env)).toBe(line);
  });

  it('accepts an https URL and readable files', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cfs-env-'));
    const file = path.join(dir, 'f');
    await fs.writeFile(file, 'x');
    const o = cfsClientOptionsFromEnv({
      CFS_API_URL: 'https://api-gw/apis/cfs/v3',
      CA_CERT: file,
      CFS_TOKEN_FILE: file,
    });
    expect(o).toMatchObject({ baseUrl: 'https://api-gw/apis/cfs/v3', caCertPath: file, tokenFile: file });
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('a token file that goes away', () => {
  let server: FakeServer;
  const lines: Record<string, unknown>[] = [];
  let stopLogs: () => void;
  beforeAll(() => {
    setLogSilent(true);
    stopLogs = addLogSink((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  });
  afterAll(() => {
    stopLogs();
    setLogSilent(false);
  });
  beforeEach(async () => {
    server = await startFakeServer();
  });
  afterEach(() => server.close());

  it('is one ERROR naming the file while it stays unreadable, and one INFO when it is back', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cfs-token-'));
    const file = path.join(dir, 'token');
    await fs.writeFile(file, 'first');
    server.on('GET /v3/options', json(200, {}));
    const c = new CfsClient({ baseUrl: server.baseUrl, retryBudgetMs: 0, tokenFile: file });
    await c.getOptions();
    await fs.rm(file);
    for (let i = 0; i < 3; i++) await c.getOptions();
    const errors = lines.filter((l) => l.level === 'ERROR' && String(l.message).includes(file));
    expect(errors.map((l) => l.message)).toEqual([
      `Cannot read the CFS token file ${file} (ENOENT); requests go with the last token read`,
    ]);
    await fs.writeFile(file, 'second');
    await c.getOptions();
    expect(
      lines.filter((l) => l.level === 'INFO' && String(l.message).includes(`${file} is readable again`)),
    ).toHaveLength(1);
    // the last good token kept the calls authorised meanwhile
    expect(server.seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer first',
      'Bearer first',
      'Bearer first',
      'Bearer first',
      'Bearer second',
    ]);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
