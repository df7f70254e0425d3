/** The requirement helper and the end-of-run summary agree on the mark a skipped block carries. */
import { skippedTitle, underCi, which } from './requires';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the reporter is plain CommonJS, as jest loads it
const { parseSkippedTitle, summaryLines } = require('./skip-summary') as {
  parseSkippedTitle: (t: string) => { missing: string; enable: string } | null;
  summaryLines: (r: unknown, root?: string) => string[];
};

const req = { what: 'amtool', missing: 'amtool not found on PATH', enable: 'apt-get install prometheus-alertmanager' };

it('the summary reads back what the helper wrote', () => {
  expect(parseSkippedTitle(skippedTitle('example route', req))).toEqual({
    missing: req.missing,
    enable: req.enable,
  });
  expect(parseSkippedTitle('example route')).toBeNull();
});

it('counts skipped tests per requirement and names their files', () => {
  const title = skippedTitle('example route', req);
  const results = {
    testResults: [
      {
        testFilePath: '/repo/test/observability/alertmanager.test.ts',
        testResults: [
          { status: 'pending', ancestorTitles: [title] },
          { status: 'pending', ancestorTitles: [title, 'inner'] },
          { status: 'passed', ancestorTitles: ['other'] },
          { status: 'pending', ancestorTitles: ['an it.skip of its own'] },
        ],
      },
    ],
  };
  expect(summaryLines(results, '/repo')).toEqual([
    'SKIPPED 2 tests: amtool not found on PATH (to run them: apt-get install prometheus-alertmanager)',
    '  in test/observability/alertmanager.test.ts',
  ]);
  expect(summaryLines({ testResults: [] })).toEqual([]);
});

it('finds a program on a PATH, or says it is not there', () => {
  expect(which('sh', '/nonexistent:/bin:/usr/bin')).toMatch(/\/sh$/);
  expect(which('no-such-program-here', '/bin:/usr/bin')).toBeUndefined();
});

it('reads CI the way CI sets it', () => {
  expect(underCi({ CI: 'true' })).toBe(true);
  expect(underCi({ CI: '1' })).toBe(true);
  expect(underCi({ CI: 'false' })).toBe(false);
  expect(underCi({})).toBe(false);
});
