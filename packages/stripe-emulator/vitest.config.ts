// The package's own test run (`npm test` in packages/stripe-emulator). The root vitest.config.ts
// runs the same files as part of the project's `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
