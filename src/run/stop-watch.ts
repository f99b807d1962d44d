/**
 * When the main thread may end the loop's thread after asking it to stop: only when the thread is
 * blocked, told apart from starved by the thread's own CPU time. A thread that answers (a row, a
 * message, its heartbeat) is alive and stops the arm itself. A thread that makes no progress while it
 * burns `graceMs` of its own CPU time is blocked (a bug, a busy loop): end it. A thread that makes no
 * progress and gets no CPU is starved by a busy machine (load 8 on 2 cores): wall-clock time alone
 * says nothing about it, so it is given up to `idleCapMs` before it is ended anyway.
 */

/** What the main thread can see of the loop's thread. */
export interface LoopProbe {
  /** A count that grows while the loop's thread makes progress (rows + messages + heartbeats). */
  progress(): number;
  /** CPU time of the loop's thread [s], NaN where unknown (not Linux, or the thread id not known yet). */
  cpuSeconds(): number;
  /** Wall clock [s]. */
  now(): number;
}

export type StopVerdict = { cut: false } | { cut: true; why: string };

export class StopWatch {
  private progress0: number;
  private cpu0: number;
  private wall0: number;

  /** @param graceMs CPU time of the loop's thread without progress before it is ended [ms]
   *  @param idleCapMs wall-clock time without progress and without CPU before it is ended anyway [ms] */
  constructor(
    private readonly probe: LoopProbe,
    readonly graceMs = 250,
    readonly idleCapMs = 10_000,
  ) {
    this.progress0 = probe.progress();
    this.cpu0 = probe.cpuSeconds();
    this.wall0 = probe.now();
  }

  /** Looks again; says whether to end the thread now, and why (the words go into the stop reason). */
  check(): StopVerdict {
    const p = this.probe;
    const progress = p.progress();
    const cpu = p.cpuSeconds();
    const wall = p.now();
    if (progress !== this.progress0 || (Number.isFinite(cpu) && !Number.isFinite(this.cpu0))) {
      this.progress0 = progress;
      this.cpu0 = cpu;
      this.wall0 = wall;
      return { cut: false };
    }
    const idleMs = (wall - this.wall0) * 1000;
    if (Number.isFinite(cpu) && Number.isFinite(this.cpu0)) {
      const ranMs = (cpu - this.cpu0) * 1000;
      if (ranMs >= this.graceMs) {
        return {
          cut: true,
          why: `the loop thread did not answer within ${this.graceMs} ms of its own CPU time (blocked, not starved: it ran ${Math.round(ranMs)} ms in ${Math.round(idleMs)} ms)`,
        };
      }
      if (idleMs >= this.idleCapMs)
        return { cut: true, why: `the loop thread made no progress for ${Math.round(idleMs)} ms (it ran ${Math.round(ranMs)} ms of it)` };
      return { cut: false };
    }
    // Without the thread's CPU time, wall-clock time is all there is.
    if (idleMs >= this.graceMs) return { cut: true, why: `the loop thread did not answer within ${this.graceMs} ms` };
    return { cut: false };
  }
}
