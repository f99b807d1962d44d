// Time limits in the tests are hang guards, never performance assertions: a test waits for events (a
// process's exit, a line of output, a promise), and its limit only ends it if it hangs. The figures
// written in the tests are what a quiet machine needs with room to spare; every limit goes through
// hangGuardMs, which allows HEAVY_LOAD_FACTOR times that (six CPU hogs on two cores, load ~8-14, slow a
// test down by up to ~4x), times TWOLINK_TEST_TIMEOUT_SCALE (default 1) for slower machines still.
// Timing targets are measured by `npm run bench`.

/** How much slower a heavily loaded machine runs a test than a quiet one, with room to spare. */
export const HEAVY_LOAD_FACTOR = 5;

/** TWOLINK_TEST_TIMEOUT_SCALE, a positive number (default 1); anything else is an error, said at once. */
export function timeoutScale(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.TWOLINK_TEST_TIMEOUT_SCALE;
  if (text === undefined || text === '') return 1;
  const v = Number(text);
  if (!Number.isFinite(v) || v <= 0)
    throw new Error(`TWOLINK_TEST_TIMEOUT_SCALE=${text}: give a positive number (e.g. 2 to double every test's time limit)`);
  return v;
}

/** The hang guard [ms] for something that takes up to `quietMs` on a quiet machine. */
export function hangGuardMs(quietMs: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.round(quietMs * HEAVY_LOAD_FACTOR * timeoutScale(env));
}
