/**
 * The logger's cost, one JSON figure per run on stderr (stdout takes the lines; send it to /dev/null):
 *   node scripts/dist/log-bench.js lines > /dev/null   100k INFO lines: lines per second, CPU microseconds per line
 *   node scripts/dist/log-bench.js debug > /dev/null   1M DEBUG calls below the INFO level: nanoseconds per call
 *   node scripts/dist/log-bench.js rss > /dev/null     RSS once the shared library is loaded and has logged a line
 * Run each a few times and take medians.
 */
import { getLogger } from '@cfs-batcher/shared';

const LINES = 100_000;
const FILTERED_CALLS = 1_000_000;

const log = getLogger('batcher.batch');
const report = (figures: Record<string, number | string>) => process.stderr.write(`${JSON.stringify(figures)}\n`);

function lines(): void {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < LINES; i++) {
    log.info('Created session', { session: `batcher-${i}`, components: 25, configuration: 'cos-config-2.4' });
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  // after the loop's queued callbacks, so their CPU counts too
  setImmediate(() => {
    const used = process.cpuUsage(cpu);
    report({
      mode: 'lines',
      linesPerSec: Math.round(LINES / seconds),
      cpuUsPerLine: Number(((used.user + used.system) / LINES).toFixed(2)),
    });
  });
}

function debug(): void {
  const meta = { session: 'batcher-1', components: 25 };
  const start = process.hrtime.bigint();
  for (let i = 0; i < FILTERED_CALLS; i++) log.debug('Filtered', meta);
  const ns = Number(process.hrtime.bigint() - start) / FILTERED_CALLS;
  report({ mode: 'debug', nsPerFilteredCall: Number(ns.toFixed(1)) });
}

function rss(): void {
  log.info('loaded');
  // once the line's callbacks have run
  setTimeout(() => report({ mode: 'rss', rssMB: Number((process.memoryUsage().rss / 2 ** 20).toFixed(1)) }), 200);
}

const MODES: Record<string, () => void> = { lines, debug, rss };
const run = MODES[process.argv[2] ?? ''];
if (!run) {
  process.stderr.write(`usage: log-bench.js ${Object.keys(MODES).join('|')}\n`);
  process.exitCode = 2;
} else {
  run();
}
