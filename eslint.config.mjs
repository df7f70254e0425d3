// ESLint flat config: typescript-eslint's type-aware recommended set over every TypeScript source and test.
// Rules turned off or eased are listed with the reason; formatting is Prettier's job (npm run lint runs both).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'coverage/**', 'bench-results/**', '.local-pod/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Floating promises are how a crash-only program loses an error: always worth a `void` or an await.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // Template literals with numbers are everywhere in log lines and messages; `any`/objects stay forbidden.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowNullish: true },
      ],
      // Express and node callbacks take async handlers by design; checking returned promises there is noise.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // Stdout is the log sink of the programs and the report sink of the tests and scripts.
      'no-console': 'off',
      // An empty catch with a comment is the idiom for "best effort" cleanup here.
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // The programs end through exitAfterLogs (shared/src/logger.ts), which waits for every logged line to leave the
    // process: a bare process.exit() drops what a slow stdout pipe has not taken yet, the fatal line included.
    files: ['batcher/src/**/*.ts', 'sidecar-health/src/**/*.ts', 'cfs-sim/src/**/*.ts', 'shared/src/**/*.ts'],
    ignores: ['shared/src/logger.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'exit',
          message: 'End a program with exitAfterLogs (shared) so its last lines arrive.',
        },
      ],
    },
  },
  {
    // Tests poke at untyped JSON answers on purpose (that is what they check); the unsafe-* family would make
    // every assertion on a parsed body a cast. The programs keep them.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // jest's expect(obj.method).toHaveBeenCalled() pattern.
      '@typescript-eslint/unbound-method': 'off',
      // Fake clocks and scripted CFS ports implement async interfaces without waiting on anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The simulator patches an untyped OpenAPI document (YAML) and wraps node's res.write/res.end in place; both are
    // what these rules flag, and both are the point of those two files.
    files: ['cfs-sim/src/spec.ts'],
    rules: { '@typescript-eslint/no-unsafe-member-access': 'off' },
  },
  {
    files: ['cfs-sim/src/transport.ts', 'cfs-sim/src/fault-actions.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
  {
    // Plain CommonJS config files (jest.config.js): no type information, node globals.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
);
