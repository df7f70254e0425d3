/**
 * Comments say why in their own words: none points at an issue, a numbered note or a past review (a reader of the
 * repository cannot open those), and every file a comment names exists in the repository, so a pointer cannot
 * outlive its file. Reads the sources only; the comments come from the TypeScript parser, so strings never count.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
/** Where the code lives; the first four are the programs, whose every line (code and strings too) is also grepped. */
const PROGRAMS = ['batcher/src', 'sidecar-health/src', 'shared/src', 'cfs-sim/src'];
const SCANNED = [...PROGRAMS, 'scripts/src', 'test'];
/** The repository's top-level folders: a comment word that starts with one of them is a repository path. */
const TOP = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
  .map((e) => e.name);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'dist' || e.name === 'node_modules' ? [] : sourceFiles(rel);
    return /\.(ts|js|mjs|cjs)$/.test(e.name) ? [rel] : [];
  });
}

interface Comment {
  file: string;
  line: number;
  text: string;
}

/** Every comment of a file, once each: the trivia before every token, JSDoc included. */
function commentsOf(file: string): Comment[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const seen = new Map<number, Comment>();
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length > 0) {
      children.forEach(visit);
      return;
    }
    // at a token's start: the comments on the previous token's line (trailing), then those on the lines after it
    const ranges = [
      ...(ts.getTrailingCommentRanges(text, node.pos) ?? []),
      ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
    ];
    for (const r of ranges) {
      if (seen.has(r.pos)) continue;
      const line = source.getLineAndCharacterOfPosition(r.pos).line + 1;
      seen.set(r.pos, { file, line, text: text.slice(r.pos, r.end) });
    }
  };
  visit(source);
  return [...seen.values()];
}

/** The configuration files at the root (jest, eslint) have comments too. */
const ROOT_FILES = readdirSync(ROOT).filter((n) => /\.(ts|js|mjs|cjs)$/.test(n));
const comments = [...SCANNED.flatMap(sourceFiles), ...ROOT_FILES].flatMap(commentsOf);

/** The names of the suite's tests: the first argument of describe/it/test (and their .each, .skip, ...). */
function testNamesOf(file: string): Comment[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: Comment[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      let callee: ts.Expression = node.expression;
      while (ts.isCallExpression(callee) || ts.isPropertyAccessExpression(callee)) callee = callee.expression;
      const first = node.arguments[0];
      if (
        ts.isIdentifier(callee) &&
        ['describe', 'it', 'test'].includes(callee.text) &&
        first &&
        (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first) || ts.isTemplateExpression(first))
      ) {
        const line = source.getLineAndCharacterOfPosition(first.getStart(source)).line + 1;
        out.push({ file, line, text: first.getText(source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * Words of a comment that name a file or folder of the repository: a path with a file extension, or one that starts
 * at a top-level folder. Not URLs, machine paths (/var/...), package paths (@scope/...) or paths that say they lie
 * outside the repository (../...).
 */
function pathsNamed(comment: string): string[] {
  const out: string[] = [];
  for (const m of comment.matchAll(/[\w.@-]+(?:\/[\w.@-]+)+\/?/g)) {
    const before = comment.slice(Math.max(0, m.index - 1), m.index);
    if (before === '/' || before === ':') continue;
    const word = m[0].replace(/[.]+$/, '');
    const first = word.split('/')[0]!;
    if (first.startsWith('@') || first === '..') continue;
    if (/\.(ts|js|mjs|cjs|json|md|ya?ml|sh|ini|txt)$/.test(word) || TOP.includes(first)) out.push(word);
  }
  return out;
}

/** Source and document names without a folder (`clock.ts`, `ARCHITECTURE.md`); built .js files are not named so. */
const bareNames = (comment: string): string[] =>
  [...comment.matchAll(/(?<![\w./@-])[\w.-]+\.(?:ts|md)\b(?![\w/])/g)].map((m) => m[0]);

function repoFileNames(dir = '.'): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
    return e.isDirectory() ? repoFileNames(path.posix.join(dir, e.name)) : [e.name];
  });
}

/** A path exists from the repository's root, or from the commenting file's folder or one of its parents. */
function exists(file: string, named: string): boolean {
  let dir = path.posix.dirname(file);
  for (;;) {
    if (existsSync(path.join(ROOT, dir, named))) return true;
    if (dir === '.' || dir === '') return false;
    dir = path.posix.dirname(dir);
  }
}

const where = (c: Comment): string => `${c.file}:${c.line}`;

it('scans a real set of comments', () => {
  expect(comments.length).toBeGreaterThan(1000);
  expect(pathsNamed('see docs/CONTRACTS.md, `shared/src/heartbeat.ts` and batcher/src/phases/')).toEqual([
    'docs/CONTRACTS.md',
    'shared/src/heartbeat.ts',
    'batcher/src/phases/',
  ]);
  expect(
    pathsNamed('http://127.0.0.1/v3/sessions, /var/run/x/heartbeat.json, @cfs-batcher/shared/tracing, ../x/y.md'),
  ).toEqual([]);
  expect(bareNames('see clock.ts and ARCHITECTURE.md, not main.js, docs/X.md or @scope/a.ts')).toEqual([
    'clock.ts',
    'ARCHITECTURE.md',
  ]);
  expect(exists('batcher/src/loop.ts', 'phases/index.ts')).toBe(true);
  expect(exists('batcher/src/loop.ts', 'shared/reference/cfs-openapi.yaml')).toBe(false);
});

/**
 * An issue or case number, a numbered note, a round of review or its short name (r and a digit), or the research
 * notes kept beside the repository (never in it).
 */
const HISTORY =
  /\bissues? #?[0-9]+|\bnotes? [0-9]+\.[0-9]|\b(pre-)?r2\b|\breview rounds?\b|\bcases? [0-9]+:|\b(cfs-api-notes|health-practices|npm-deps-tested)\b/i;
const cites = (list: Comment[]): string[] =>
  list.filter((c) => HISTORY.test(c.text)).map((c) => `${where(c)}: ${c.text.match(HISTORY)![0]}`);

it('no comment cites an issue, a numbered note or a past review', () => {
  expect(cites(comments)).toEqual([]);
});

it('no test is named after an issue, a numbered case or a past review', () => {
  const names = sourceFiles('test').flatMap(testNamesOf);
  expect(names.length).toBeGreaterThan(500);
  expect(cites(names)).toEqual([]);
});

it('the programs name no issue, note or past review anywhere, in code or comment', () => {
  const pattern = /issue [0-9]|notes? [0-9]+\.[0-9]|\br2\b/;
  const hits = PROGRAMS.flatMap(sourceFiles).flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
  expect(hits).toEqual([]);
});

it('every repository path a comment names exists', () => {
  const missing = comments.flatMap((c) =>
    pathsNamed(c.text)
      .filter((p) => !exists(c.file, p))
      .map((p) => `${where(c)}: ${p}`),
  );
  expect(missing).toEqual([]);
});

it('every source or document file a comment names by its bare name exists somewhere in the repository', () => {
  const names = new Set(repoFileNames());
  const missing = comments.flatMap((c) =>
    bareNames(c.text)
      .filter((n) => !names.has(n))
      .map((n) => `${where(c)}: ${n}`),
  );
  expect(missing).toEqual([]);
});
