/**
 * How tune computes while the board waits for answers (tune on a port, or the mock in real time): the
 * thread that answers the board's samples (SCHED_FIFO 40 on a port, cli/realtime-arg.ts) is also the
 * one that fits the joint's model between the experiments, while the arm is held at its pose, and the
 * board's watchdog stops the motors after 100 ms without a command. Two rules keep the answers going:
 *
 * 1. **The long work yields, and sleeps.** `pause()` is called often inside the fit (tune/joint-model.ts
 *    fitCoupled, after each grid point); after YIELD_AFTER_MS of work since the last sleep it sleeps
 *    SLEEP_MS (a timer: the thread blocks in the event loop's poll and answers the samples that came).
 *    A yield that does not block (`setImmediate`, as before) is not enough under SCHED_FIFO: the thread
 *    never leaves its CPU, so (a) the threads that carry its serial reads (libuv's pool, priority 39) wait
 *    for a CPU, and (b) real-time threads that leave normal threads less than 5 % of a CPU are stopped
 *    by the kernel for ~50 ms of each second (docs/realtime.md, "The kernel's 5 %": the fair deadline
 *    server of Linux 6.12 and later, measured here; older kernels' RT throttling,
 *    `sched_rt_runtime_us` 950 ms of each 1 s, has the same bound), the simulated board's among them.
 *    (This said RT throttling alone until 2026-12-07: the stops stay with `sched_rt_runtime_us` -1.) Measured on this 2-core machine, quiet, `tune --port` on our firmware in simavr with a
 *    gap logger in the loop: with `setImmediate`, 5 of 7 runs ended on the board's watchdog (CI stop 39
 *    failed on it), the simulated board's thread stopped for 24-39 ms at a time, the board left 50-105 ms
 *    without an answer during the fit, and the fits took 1.9-2.3 s (joint 1) and 8.3 s (joint 2); with
 *    the sleep, 0 of 6, the fits 1.2 s and 5.8-6.4 s, the longest gap 30-53 ms.
 * 2. **The spectra run in a worker thread** (spectra-worker.ts; a new thread starts at normal priority:
 *    realtime-arg.ts asks SCHED_RESET_ON_FORK): an FFT of the whole record took 20-50 ms at its first call
 *    (the JIT cold), in one piece.
 *
 * Virtual time needs neither: its clock stands still while tune computes.
 */
import { Worker } from 'node:worker_threads';
import type { SpectraJob, SpectraResult } from './spectra-job.js';

/** Work [ms] after which pause() sleeps. */
export const YIELD_AFTER_MS = 8;
/** The sleep [ms] (a timer of 1 ms: the poll blocks until it, or until a sample comes). */
export const SLEEP_MS = 1;

/** Long computations in real time: pause() inside them, spectra() in a worker thread. */
export interface RealTimeCompute {
  pause: () => Promise<void>;
  spectra: (job: SpectraJob) => Promise<SpectraResult>;
}

/** The compiled worker (a test that runs the TypeScript sources uses the build's, as controller-thread.ts does). */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/tune/spectra-worker.js', here) : new URL('./spectra-worker.js', here);
}

/** One job in a worker of its own; its error (or an exit without an answer) rejects. */
export function spectraInWorker(job: SpectraJob): Promise<SpectraResult> {
  return new Promise((resolve, reject) => {
    const w = new Worker(workerUrl(), { workerData: job });
    let answered = false;
    w.once('message', (m: SpectraResult) => {
      answered = true;
      resolve(m);
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (!answered) reject(new Error(`tune: the spectra's worker thread ended (exit code ${code}) without an answer`));
    });
  });
}

/** A pause that sleeps SLEEP_MS once YIELD_AFTER_MS of work has gone by since the last (`now`: a monotonic clock [ms]). */
export function slicedPause(now: () => number = () => performance.now()): () => Promise<void> {
  let last = now();
  return () => {
    if (now() - last < YIELD_AFTER_MS) return Promise.resolve();
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        last = now();
        resolve();
      }, SLEEP_MS),
    );
  };
}

/** What tune computes with in real time. */
export function realTimeCompute(): RealTimeCompute {
  return { pause: slicedPause(), spectra: spectraInWorker };
}
