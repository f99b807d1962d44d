// ESLint (flat config) with typescript-eslint's type-checked recommended rules, as `npm test` runs it
// (`npm run lint`). Types come from the projects: tsconfig.json for src/, tests/tsconfig.json (the same as
// tsconfig.test.json) for tests/; the few loose files (config, scripts, examples) are linted without types.
// Formatting is Prettier's (.prettierrc.json); nothing here argues about layout.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'runs/**', 'coverage/**', 'firmware-protocol/**/build/**', 'tests/fixtures/controllers/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['vitest.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // The tick's object and JSON writers are compiled from the tick table once, with `new Function`, so
    // that the 1 kHz path is straight-line code (tests/tick-table.test.ts checks them against the table).
    files: ['src/telemetry/tick.ts'],
    rules: { '@typescript-eslint/no-implied-eval': 'off' },
  },
  {
    // Plain JavaScript outside the projects: the untyped rule set.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Tests read JSON back from the CLI's output and recordings: `any` there is the parsed document, and
    // reading its fields is the test (a wrong field fails the assertion, not the type checker).
    files: ['tests/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    rules: {
      // `_name` marks a parameter or binding kept for its position (a callback's signature, a tuple).
      // An async method that implements a promise-returning interface (serialport's binding, a prompt) may
      // have nothing to await: `async` is how its throws become the rejections its callers handle.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        clearImmediate: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
        SharedArrayBuffer: 'readonly',
        Atomics: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        WebAssembly: 'readonly',
      },
    },
  },
);
