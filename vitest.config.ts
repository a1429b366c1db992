// The project's `npm test`: every suite under test/ and the workspace packages' tests, with one global setup.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The workspace packages' own tests too (packages/stripe-emulator/test): CI runs only `npm test`.
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Integration suites share one Temporal dev server and one PostgreSQL server per file;
    // two cores do not benefit from more than two files at once.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
