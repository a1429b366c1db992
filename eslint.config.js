// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import orderPayments from './eslint-rules/patch-needs-reason.js';

/**
 * The Stripe emulator is a workspace package (packages/stripe-emulator) with one public module,
 * its index: code outside the package imports `@order-payments/stripe-emulator` and nothing
 * deeper, by package path or by relative path into its src/ (test/lint/no-emulator-deep-imports.test.ts).
 */
const EMULATOR_DEEP_IMPORTS = {
  group: ['@order-payments/stripe-emulator/**', '**/packages/stripe-emulator/**', '**/stripe-emulator/src/**'],
  message: 'Import the Stripe emulator only through its public index: @order-payments/stripe-emulator.',
};

/** `import()` is not covered by no-restricted-imports: the same deep paths, as syntax. */
const EMULATOR_DEEP_DYNAMIC_IMPORT = {
  selector: 'ImportExpression[source.value=/^@order-payments.stripe-emulator.|(^|.)packages.stripe-emulator(.|$)|stripe-emulator.src(.|$)/]',
  message: EMULATOR_DEEP_IMPORTS.message,
};

/**
 * The emulator's exports are TypeScript source (packages/stripe-emulator/README.md, "How it is
 * built"), which plain node cannot load from dist/: production code in src/ must not import it at
 * all. Only the development tools that run through tsx may, and `npm run build` leaves those out.
 */
const DEV_TOOLS = ['src/stack.ts', 'src/demo.ts', 'src/chaos.ts', 'src/soak.ts', 'src/operations/stack/**', 'src/operations/demo/**', 'src/operations/chaos/**'];
const EMULATOR_IN_PRODUCTION = {
  selector:
    ':matches(ImportDeclaration, ExportNamedDeclaration, ExportAllDeclaration, ImportExpression)[source.value=/^@order-payments.stripe-emulator($|.)/]',
  message: 'The Stripe emulator is dev-only: production code under src/ (compiled to dist/, run on plain node) must not import it.',
};

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
    // CommonJS the SDK require()s by path (the failure converter): outside the TypeScript project.
    files: ['**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, sourceType: 'commonjs', globals: globals.node },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.ts', '**/*.js'],
    ignores: ['packages/stripe-emulator/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [EMULATOR_DEEP_IMPORTS] }],
      'no-restricted-syntax': ['error', EMULATOR_DEEP_DYNAMIC_IMPORT],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: DEV_TOOLS,
    rules: {
      // Replaces the options above for these files, so it repeats the dynamic-import rule.
      'no-restricted-syntax': ['error', EMULATOR_DEEP_DYNAMIC_IMPORT, EMULATOR_IN_PRODUCTION],
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
        {
          patterns: [
            { group: ['node:*', 'pg', 'stripe', '../activities/*/!(types)*', '../money/ledger/*', '../money/stripe/*', '../platform/db/*'] },
            // This block replaces the rule's options above for workflow files, so it repeats them.
            EMULATOR_DEEP_IMPORTS,
          ],
        },
      ],
    },
  },
  {
    // A saga change ships as a new worker build, not a patched() branch (eslint-rules/patch-needs-reason.js).
    files: ['**/*.ts'],
    plugins: { 'order-payments': orderPayments },
    rules: { 'order-payments/patch-needs-reason': 'error' },
  },
  {
    files: ['eslint.config.js', 'eslint-rules/**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
