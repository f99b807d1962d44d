// ESLint (flat config) with typescript-eslint's recommended rules, as `npm test` runs it (`npm run lint`).
// Formatting is Prettier's (.prettierrc.json); nothing here argues about layout.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'runs/**', 'coverage/**', 'firmware-protocol/**/build/**', 'tests/fixtures/controllers/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Tests read JSON back from the CLI's output and recordings: `any` there is the parsed document.
    files: ['tests/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      // `_name` marks a parameter or binding kept for its position (a callback's signature, a tuple).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
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
