import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests that open ptys, spawn the CLI or build firmware share two cores: keep them from starving
    // each other (timing is measured by `npm run bench`, not asserted here).
    maxWorkers: 2,
  },
});
