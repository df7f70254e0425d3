/**
 * What the logger tests read: every line the logger builds, captured by a sink before each test (stdout silenced,
 * level INFO) and released after it. The tests read `lines` and call `stop` directly; ES module bindings are live, so
 * each sees the capture of the test that is running.
 */
import { addLogSink, getLogger, setLogLevel, setLogSilent } from '@cfs-batcher/shared';

export type Line = Record<string, unknown>;

export let lines: { line: string; record: Line }[] = [];
export let stop: () => void = () => undefined;
export const log = getLogger('test.logger');
/** The parsed lines, as an admin (or a test reading a program's stdout) sees them. */
export const parsed = (): Line[] => lines.map((l) => JSON.parse(l.line) as Line);
export const last = (): Line => parsed().at(-1)!;

/** Captures the lines of each test of the file (or block) it is called in. */
export function captureLogLines(): void {
  beforeEach(() => {
    setLogSilent(true);
    setLogLevel('INFO');
    lines = [];
    stop = addLogSink((line, record) => lines.push({ line, record }));
  });
  afterEach(() => {
    stop();
    setLogSilent(false);
    setLogLevel('INFO');
    jest.restoreAllMocks();
  });
}
