/**
 * What a bug of twolink's own does to a run (docs/safety.md): an exception or a promise rejection that
 * nobody caught, on the main thread (the live view, the dashboard, the recorder) or on the loop's
 * thread, stops the arm (the loop e-stops: the motors zeroed; on Firmata, whose stock firmware has no
 * watchdog, the zero is written and read back from the board before the thread ends), then the run
 * ends with `fault:internal` naming where, its summary and recording completed.
 *
 * And the test-only hook that proves it: the environment variable `TWOLINK_TEST_CRASH=THREAD@S`
 * (THREAD `main`, `main-rejection` or `loop`; `recorder`: the recording's writer throws from then on)
 * makes twolink throw (or reject) on that thread S seconds after the board is connected, saying so first on stderr with the monotonic clock's time (the clock
 * `process.hrtime` reads, shared by every process of the machine: a test rig's reports use it too), and
 * as a value, a `test-crash` record on TWOLINK_REPORT_FD when the parent gave one (run-report.ts).
 * Never set it outside a test.
 */
import type { Session } from './session.js';
import { writeRunReport } from './run-report.js';

/** The test hook's variable. */
export const TEST_CRASH_ENV = 'TWOLINK_TEST_CRASH';

/** Where the test hook throws. */
export type CrashThread = 'main' | 'main-rejection' | 'loop' | 'recorder';

/** The test hook's plan from the environment, or undefined; a malformed value is an error naming the variable. */
export function testCrashPlan(env: NodeJS.ProcessEnv = process.env): { thread: CrashThread; afterS: number } | undefined {
  const v = env[TEST_CRASH_ENV];
  if (v === undefined || v === '') return undefined;
  const m = /^(main|main-rejection|loop|recorder)@(\d+(?:\.\d+)?)$/.exec(v);
  if (!m)
    throw new Error(
      `${TEST_CRASH_ENV}="${v}": write THREAD@SECONDS, THREAD main, main-rejection, loop or recorder (a test-only hook: docs/safety.md)`,
    );
  return { thread: m[1] as CrashThread, afterS: Number(m[2]) };
}

/** The monotonic clock [ms] (CLOCK_MONOTONIC: the same in every process of this machine). */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The test hook's line on stderr (for people), just before it throws at `monoMs` (a program reads its `test-crash` record). */
export function testCrashLine(thread: CrashThread, monoMs = monotonicMs()): string {
  const what = thread === 'recorder' ? ' (the recorder, from now on)' : thread === 'main-rejection' ? ' (a rejected promise)' : '';
  return `twolink: ${TEST_CRASH_ENV}: throwing on the ${thread === 'loop' ? 'loop' : 'main'} thread${what} at monotonic ${monoMs.toFixed(3)} ms\n`;
}

/**
 * Arms the test hook on this thread (`thread` of the plan must be this one): throws `afterS` from now;
 * `recorder`: the recording's `tick` of `session` throws from then on.
 */
export function armTestCrash(plan: { thread: CrashThread; afterS: number }, session?: Pick<Session, 'recorder'>): void {
  setTimeout(() => {
    const monoMs = monotonicMs();
    writeRunReport({ kind: 'test-crash', thread: plan.thread, monoMs });
    process.stderr.write(testCrashLine(plan.thread, monoMs));
    const e = new Error(
      `${TEST_CRASH_ENV}: the injected ${plan.thread === 'main-rejection' ? 'rejection' : plan.thread === 'recorder' ? "recorder's failure" : 'exception'} (a test)`,
    );
    if (plan.thread === 'main-rejection') void Promise.reject(e);
    else if (plan.thread === 'recorder') {
      const r = session?.recorder;
      if (r)
        r.tick = () => {
          throw e;
        };
    } else throw e;
  }, plan.afterS * 1000).unref();
}

/** The first frame of a stack in twolink's own files, as `dist/viz/live-view.js:120`, if there is one. */
export function whereInStack(e: unknown): string | undefined {
  const stack = e instanceof Error ? e.stack : undefined;
  if (!stack) return undefined;
  for (const line of stack.split('\n').slice(1)) {
    const m = /((?:dist|src)\/[\w/.-]+\.[jt]s):(\d+)/.exec(line);
    if (m) return `${m[1]}:${m[2]}`;
  }
  return undefined;
}

/**
 * While `session` runs: an exception or a rejection nobody caught on this (the main) thread ends it
 * with `fault:internal` after the motors are zeroed (Session.crash); each is said on stderr in one
 * line. Returns the function that takes the handlers off (after the run).
 */
export function stopOnCrash(session: Session, say: (line: string) => void = (l) => void process.stderr.write(`${l}\n`)): () => void {
  const on = (kind: 'exception' | 'rejection') => (e: unknown) => {
    const at = whereInStack(e);
    const where = `the main thread${at ? ` (${at})` : ''}${kind === 'rejection' ? ', a promise rejection nobody caught' : ''}`;
    const first = session.crash(where, e);
    const text = e instanceof Error ? e.message : String(e);
    say(
      first
        ? `twolink: an error twolink did not catch, in ${where}: ${text}: stopping the arm (fault:internal)`
        : `twolink: another error twolink did not catch, in ${where}: ${text}`,
    );
  };
  const onException = on('exception');
  const onRejection = on('rejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
