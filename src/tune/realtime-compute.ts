/**
 * How tune computes while the board waits for answers (tune on a port, or the mock in real time): the
 * thread that answers the board's samples (SCHED_FIFO 40 on a port, cli/realtime-arg.ts) does no long
 * work at all. The preflight (0.65 s on this machine), the spectra (an FFT of the whole record, 20-50 ms
 * at its first call) and the model's fit (1.2-6 s) each run in a worker thread of their own, which
 * starts at normal priority (realtime-arg.ts asks SCHED_RESET_ON_FORK), while the loop goes on holding
 * the arm at its pose. Two reasons, both measured on this 2-core machine with `tune --port` on our
 * firmware in simavr (the board at SCHED_FIFO 45, its plant at 44: together ~1.1 CPUs):
 *
 * 1. **The board's watchdog.** A sample unanswered for 100 ms stops the motors. With the fit on the loop's
 *    thread in one piece, and with `setImmediate` yields inside it, 5 of 7 runs ended on the watchdog
 *    (CI stop 39 failed on it).
 * 2. **The kernel's 5 %.** Real-time threads that leave normal threads less than 5 % of a CPU for about a
 *    second are stopped by the kernel for up to ~50 ms (docs/realtime.md, "The kernel's 5 %": the fair
 *    deadline server of Linux 6.12 and later; older kernels' RT throttling, `sched_rt_runtime_us` 950 ms of
 *    each 1 s, has the same bound), the simulated board's threads among them. Any real-time work that
 *    fills the CPUs left beside the board's does that: the fit sliced into 8 ms of work and 1 ms of sleep
 *    on the loop's thread (as until 2026-12-07), with the preflight there too, completed 1 of 4 quiet runs
 *    (the board starved 20-74 ms at a time, 2-3 times a run; the watchdog stopped the motors at the start
 *    or right after a joint's fit), and with 2 ms of work and 3 of sleep 1 of 3. In a worker at normal
 *    priority the work takes what the real-time threads leave, and a busy machine makes tune slower,
 *    not the board late.
 *
 * Virtual time needs none of it: its clock stands still while tune computes.
 */
import { Worker } from 'node:worker_threads';
import type { PreflightJob } from './design.js';
import type { FitJob, FitResult } from './joint-model.js';
import type { TuneJobKind, TuneJobs } from './jobs.js';
import type { SpectraJob, SpectraResult } from './spectra-job.js';

/** Long computations in real time, each in a worker thread. */
export interface RealTimeCompute {
  spectra: (job: SpectraJob) => Promise<SpectraResult>;
  fit: (job: FitJob) => Promise<FitResult>;
  preflight: (job: PreflightJob) => Promise<TuneJobs['preflight']['result']>;
}

/** The compiled worker (a test that runs the TypeScript sources uses the build's, as controller-thread.ts does). */
function workerUrl(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL('../../dist/tune/compute-worker.js', here) : new URL('./compute-worker.js', here);
}

/** One job in a worker of its own; its error (or an exit without an answer) rejects. */
export function inWorker<K extends TuneJobKind>(kind: K, job: TuneJobs[K]['job']): Promise<TuneJobs[K]['result']> {
  return new Promise((resolve, reject) => {
    const w = new Worker(workerUrl(), { workerData: { kind, job } });
    let answered = false;
    w.once('message', (m: TuneJobs[K]['result']) => {
      answered = true;
      resolve(m);
    });
    w.once('error', reject);
    w.once('exit', (code) => {
      if (!answered) reject(new Error(`tune: the ${kind} job's worker thread ended (exit code ${code}) without an answer`));
    });
  });
}

/** What tune computes with in real time. */
export function realTimeCompute(): RealTimeCompute {
  return {
    spectra: (job) => inWorker('spectra', job),
    fit: (job) => inWorker('fit', job),
    preflight: (job) => inWorker('preflight', job),
  };
}
