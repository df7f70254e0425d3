/** The helpers the image tests rely on: the Dockerfile parser, ENTRYPOINT node flags, and .dockerignore matching. */
import { entrypointOf as entrypointIn, nodeFlagsOf, parseDockerfile } from '../../scripts/src/dockerfile';
import { dockerIgnored, ignorePatterns } from './dockerignore';

describe('dockerfile helpers', () => {
  it('parses continuations and skips comments', () => {
    expect(parseDockerfile('# c\nFROM a AS b\nRUN x \\\n  y\n')).toEqual([
      { op: 'FROM', args: 'a AS b' },
      { op: 'RUN', args: 'x y' },
    ]);
  });
  it('reads the node flags of an exec-form ENTRYPOINT and refuses a shell-form one', () => {
    const main = 'batcher/dist/main.js';
    expect(nodeFlagsOf(['/nodejs/bin/node', '--lite-mode', main, '--x'], main)).toEqual(['--lite-mode']);
    expect(nodeFlagsOf(['/nodejs/bin/node', main], main)).toEqual([]);
    expect(nodeFlagsOf(['node', '--require', 'x.js', main], main)).toEqual(['--require', 'x.js']);
    expect(() => nodeFlagsOf(['/usr/bin/tini', '--', 'node', main], main)).toThrow(/does not start with node/);
    expect(() => nodeFlagsOf(['node', 'other.js'], main)).toThrow(/does not run batcher/);
    expect(() => entrypointIn('FROM a\nENTRYPOINT node main.js\n', 'Dockerfile.x')).toThrow(
      /Dockerfile.x: no exec-form ENTRYPOINT/,
    );
    expect(entrypointIn('FROM a\nENTRYPOINT ["node", "a.js"]\nENTRYPOINT ["node", "b.js"]\n', 'D')).toEqual([
      'node',
      'b.js',
    ]);
  });
  it('.dockerignore is an allowlist: host builds, tests, the simulator and credential files stay out of the context', () => {
    for (const rel of [
      'node_modules',
      'shared/dist',
      '.npmrc',
      '.env',
      'test/deploy/images-dockerfile-helpers.test.ts',
      'docs',
      'cfs-sim/src/main.ts',
      'scripts',
    ]) {
      expect([rel, dockerIgnored(ignorePatterns, rel)]).toEqual([rel, true]);
    }
    expect(dockerIgnored(ignorePatterns, 'cfs-sim/package.json')).toBe(false);
  });
  it('applies .dockerignore patterns', () => {
    expect(dockerIgnored(['**/dist'], 'batcher/dist')).toBe(true);
    expect(dockerIgnored(['**/dist'], 'batcher/src')).toBe(false);
    expect(dockerIgnored(['test'], 'test/deploy/x.ts')).toBe(true);
    expect(dockerIgnored(['*.log', '!keep.log'], 'keep.log')).toBe(false);
  });
});
