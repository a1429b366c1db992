// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['node_modules', 'dist', '.tools', '.data', 'coverage', 'test/fixtures'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no clocks, randomness or I/O
    // except through the Temporal APIs.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process'],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Workflows must be deterministic.' },
        { object: 'Date', property: 'now', message: 'Use workflow time via Temporal APIs.' },
      ],
      'no-restricted-imports': [
        'error',
        { patterns: ['node:*', 'pg', 'stripe', '../activities/*/!(types)*', '../money/ledger/*', '../money/stripe/*', '../platform/db/*'] },
      ],
    },
  },
  {
    files: ['eslint.config.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
