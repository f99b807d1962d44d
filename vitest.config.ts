import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure and virtual-time tests, in parallel) and `realtime` (ptys, child
// processes, the terminal: one file at a time, after the unit tests, so that they do not compete for
// the two cores with the firmware build and each other). Timing is measured by `npm run bench`, never
// asserted tightly here.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { test: { name: 'unit', include: ['tests/*.test.ts'], maxWorkers: 2, testTimeout: 60_000, hookTimeout: 60_000 } },
      { test: { name: 'realtime', include: ['tests/realtime/*.test.ts'], maxWorkers: 1, fileParallelism: false, testTimeout: 120_000, hookTimeout: 60_000 } },
    ],
  },
});
