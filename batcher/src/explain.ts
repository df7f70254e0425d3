/**
 * `node batcher/dist/explain.js ID [--url URL] [--json]`: why a component is not configured yet, asked of the
 * running batcher's `GET /explain/{id}` (inside the batcher container: `kubectl exec deploy/cfs-batcher -c
 * cfs-batcher -- /nodejs/bin/node batcher/dist/explain.js ID`). Prints the sentence, then the details.
 *
 * Options and exit codes: EXPLAIN_CLI below (also the --help text).
 */
import '@cfs-batcher/shared/node-check';
import http from 'node:http';
import https from 'node:https';
// the command's own entry (node:util only): the shared barrel would load the whole client for one GET
import { cliErrorMessage, cliUsage, parseCli, type CliSpec } from '@cfs-batcher/shared/cli';
import { idRejection } from './explain-id';

export const EXPLAIN_CLI: CliSpec = {
  command: 'node batcher/dist/explain.js',
  positionals: 'ID',
  summary: 'Why component ID is not configured yet, asked of the running batcher (GET /explain/ID).',
  options: {
    url: {
      type: 'string',
      value: 'URL',
      help: "the batcher's /metrics port (default http://127.0.0.1:METRICS_PORT, 9088 when unset)",
    },
    json: { type: 'boolean', help: "print the batcher's JSON answer instead of the sentence and details" },
  },
  exitCodes: [
    [0, 'the batcher or CFS knows the component (or --help)'],
    [1, 'CFS has no component with this id'],
    [2, 'usage error: bad arguments, or an id CFS cannot hold'],
    [3, 'no answer: the batcher is unreachable or busy, or could not ask CFS'],
  ],
  notes: [
    'In the batcher container: kubectl exec deploy/cfs-batcher -c cfs-batcher -- /nodejs/bin/node batcher/dist/explain.js ID',
  ],
};
const USAGE = cliUsage(EXPLAIN_CLI);
/** The least wait for an answer: twice one CFS lookup at the default request timeout (10 s). */
const ANSWER_TIMEOUT_MS = 20_000;
/** Beyond the lookup's own deadline, for the batcher to answer once it has CFS's word. */
const ANSWER_MARGIN_MS = 5_000;

/**
 * Pure: how long to wait for the batcher. Its CFS lookup may take up to CFS_REQUEST_TIMEOUT_MS (the container's
 * environment is the batcher's), and a command that gave up first would blame the batcher for a slow CFS.
 */
export function answerTimeoutMs(env: NodeJS.ProcessEnv): number {
  const lookup = Number(env.CFS_REQUEST_TIMEOUT_MS);
  return Number.isInteger(lookup) && lookup > 0
    ? Math.max(ANSWER_TIMEOUT_MS, lookup + ANSWER_MARGIN_MS)
    : ANSWER_TIMEOUT_MS;
}

export interface ExplainArgs {
  id: string;
  url: string;
  json: boolean;
}

/** Pure: the command line -> what to ask, or why it cannot be asked. */
export function parseExplainArgs(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ExplainArgs | { help: true } | { error: string } {
  const port = env.METRICS_PORT && env.METRICS_PORT !== '0' ? env.METRICS_PORT : '9088';
  let parsed;
  try {
    parsed = parseCli(EXPLAIN_CLI, argv);
  } catch (err) {
    return { error: cliErrorMessage(err) };
  }
  if (parsed.help) return { help: true };
  const url = (parsed.values.url as string | undefined) ?? `http://127.0.0.1:${port}`;
  const json = parsed.values.json === true;
  const ids = parsed.positionals;
  if (ids.length !== 1) return { error: ids.length === 0 ? 'an id is required' : 'give exactly one id' };
  const bad = idRejection(ids[0]!);
  if (bad !== null) return { error: bad };
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: '--url must be an http or https URL' };
  } catch {
    return { error: '--url must be an http or https URL' };
  }
  return { id: ids[0]!, url: url.replace(/\/+$/, ''), json };
}

/** Pure: the details of an answer as indented `key: value` lines (nested keys joined with dots). */
export function detailLines(body: Record<string, unknown>): string[] {
  const lines: string[] = [];
  const walk = (prefix: string, v: unknown): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) walk(prefix === '' ? k : `${prefix}.${k}`, x);
      return;
    }
    lines.push(`  ${prefix}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  };
  for (const [k, v] of Object.entries(body)) if (k !== 'reason') walk(k, v);
  return lines;
}

/** Pure: the exit code of an answer. */
export function exitCodeOf(status: number, body: Record<string, unknown>): number {
  if (status === 200) return 0;
  if (status === 404 && body.state === 'unknown') return 1;
  if (status === 400) return 2;
  return 3;
}

function get(url: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  const lib = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.get(url, { timeout: timeoutMs, headers: { Accept: 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseExplainArgs(argv, process.env);
  if ('help' in args) {
    process.stdout.write(USAGE);
    return 0;
  }
  if ('error' in args) {
    process.stderr.write(`explain: ${args.error}\n${USAGE.split('\n')[0]} (--help lists the options)\n`);
    return 2;
  }
  let answer: { status: number; text: string };
  try {
    answer = await get(`${args.url}/explain/${encodeURIComponent(args.id)}`, answerTimeoutMs(process.env));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    process.stderr.write(
      `explain: cannot reach the batcher at ${args.url}: ${why} (its METRICS_PORT serves /explain)\n`,
    );
    return 3;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    process.stderr.write(`explain: ${args.url} answered ${answer.status} without JSON; is it the batcher?\n`);
    return 3;
  }
  if (args.json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else {
    const line = typeof body.reason === 'string' ? body.reason : `${answer.status} without a reason`;
    process.stdout.write(`${line}\n${detailLines(body).join('\n')}\n`);
  }
  return exitCodeOf(answer.status, body);
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
