import { defineConfig } from 'vitest/config';
import { hangGuardMs } from './tests/helpers/hang-guard.js';

// Two projects: `unit` (pure and virtual-time tests, in parallel) and `realtime` (ptys, child
// processes, the terminal: one file at a time, so that they do not compete for the two cores with
// each other). `npm test` runs both, the realtime half even when the unit half failed. Timing is
// measured by `npm run bench`, never asserted here: a test's time limit is a hang guard
// (tests/helpers/hang-guard.ts: what a quiet machine needs, times the heavy-load factor, times
// TWOLINK_TEST_TIMEOUT_SCALE), the same for every test that does not need more.
const unitMs = hangGuardMs(150_000);
const realtimeMs = hangGuardMs(240_000);

export default defineConfig({
  // Vite's cache out of node_modules: a new file there makes npm's hidden lockfile
  // (node_modules/.package-lock.json) out of date, and every `npx twolink` then reads the whole tree
  // again (17-32 s seen after the tests had run, issue 35).
  cacheDir: '.vitest-cache',
  test: {
    testTimeout: unitMs,
    hookTimeout: unitMs,
    projects: [
      { test: { name: 'unit', include: ['tests/*.test.ts'], maxWorkers: 2, testTimeout: unitMs, hookTimeout: unitMs } },
      {
        test: {
          name: 'realtime',
          include: ['tests/realtime/*.test.ts'],
          setupFiles: ['tests/helpers/children-setup.ts'],
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: realtimeMs,
          hookTimeout: realtimeMs,
        },
      },
    ],
  },
});
