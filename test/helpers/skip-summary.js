/**
 * A jest reporter: at the end of the run, what did not run for want of a tool or file, and how to enable it. It
 * counts the skipped tests whose describe title carries the mark test/helpers/requires.ts puts there
 * ("... [SKIPPED: amtool not found on PATH | to run: apt-get install prometheus-alertmanager]").
 */
const path = require('node:path');

const MARK = /\[SKIPPED: (.+?) \| to run: (.+)\]$/;

/** Pure: { missing, enable } from a title with the mark, or null. */
function parseSkippedTitle(title) {
  const m = MARK.exec(title);
  return m ? { missing: m[1], enable: m[2] } : null;
}

/** Pure: the summary lines for jest's aggregated results (empty when nothing was skipped for a requirement). */
function summaryLines(results, rootDir) {
  const groups = new Map();
  for (const file of results.testResults ?? []) {
    for (const t of file.testResults ?? []) {
      if (t.status !== 'pending' && t.status !== 'skipped') continue;
      const mark = (t.ancestorTitles ?? []).map(parseSkippedTitle).find(Boolean);
      if (!mark) continue;
      const key = `${mark.missing}\u0000${mark.enable}`;
      const g = groups.get(key) ?? { ...mark, tests: 0, files: new Set() };
      g.tests += 1;
      g.files.add(file.testFilePath);
      groups.set(key, g);
    }
  }
  const lines = [];
  for (const g of groups.values()) {
    const files = [...g.files].map((f) => (rootDir ? path.relative(rootDir, f) : f)).sort();
    lines.push(`SKIPPED ${g.tests} test${g.tests === 1 ? '' : 's'}: ${g.missing} (to run them: ${g.enable})`);
    lines.push(`  in ${files.join(', ')}`);
  }
  return lines;
}

class SkipSummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig?.rootDir;
  }

  onRunComplete(_contexts, results) {
    const lines = summaryLines(results, this.rootDir);
    if (lines.length === 0) return;
    const rule = '='.repeat(78);
    process.stderr.write(
      `\n${rule}\nNOT RUN on this machine (npm test still passes; CI=true makes each of these a failure):\n` +
        `${lines.join('\n')}\n${rule}\n`,
    );
  }
}

module.exports = SkipSummaryReporter;
module.exports.parseSkippedTitle = parseSkippedTitle;
module.exports.summaryLines = summaryLines;
