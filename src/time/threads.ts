/**
 * Threads as Linux sees them: this thread's task id, a task's CPU time, and asking for real-time
 * scheduling (SCHED_FIFO) for one thread. Everything here degrades to "unknown" off Linux.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** This thread's Linux task id (from /proc/thread-self), or -1 where there is none. */
export function threadId(): number {
  try {
    const m = /task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

/** CPU time of task `tid` of this process [s] (utime + stime), or NaN if unknown. */
export function taskCpuSeconds(tid: number): number {
  try {
    const s = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

/** CPU time of this whole process, all threads [s] (from /proc/self/stat), or NaN. */
export function processCpuSeconds(): number {
  try {
    const s = readFileSync('/proc/self/stat', 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** How a user gets real-time priority (FACTS.md: chrt works as root; a user needs an rtprio limit or CAP_SYS_NICE). */
export function rtHowTo(priority = 45): string {
  return (
    `allow it with an rtprio limit, e.g. a line "${process.env.USER ?? 'youruser'} - rtprio ${priority}" in /etc/security/limits.d/twolink.conf (then log in again), ` +
    'or give node CAP_SYS_NICE (sudo setcap cap_sys_nice+ep $(which node)), or start twolink under chrt -f 40 as root'
  );
}

/**
 * The one start-up line of a run (or a rig) without real-time priority: `why` is the refusal, or that
 * it was not asked for (`--no-rt`).
 */
export function noRealtimeLine(who: string, why: string): string {
  return `${who}: WARNING: no real-time priority (${why}): a busy machine may stop the arm (fault:watchdog or link-lost); to get it, ${rtHowTo()}`;
}

/** What came of asking for real-time scheduling. */
export type RtResult = { granted: true; priority: number } | { granted: false; reason: string };

/**
 * Asks Linux for SCHED_FIFO at `priority` for task `tid` (with util-linux's `chrt`). Needs
 * CAP_SYS_NICE or an `rtprio` limit (ulimit -r) of at least `priority`; the reason says how to allow it.
 */
export function requestRealtime(tid: number, priority = 40): Promise<RtResult> {
  if (process.platform !== 'linux' || tid < 0) return Promise.resolve({ granted: false, reason: 'real-time scheduling is only offered on Linux' });
  return new Promise((resolve) => {
    execFile('chrt', ['-f', '-p', String(priority), String(tid)], (err, _out, stderr) => {
      if (!err) {
        resolve({ granted: true, priority });
        return;
      }
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      const text = String(stderr).trim() || err.message;
      resolve({
        granted: false,
        reason: missing ? 'chrt (util-linux) is not installed' : `${text}`,
      });
    });
  });
}

/** Puts task `tid` back to normal scheduling (SCHED_OTHER), after `requestRealtime`. Never throws. */
export function leaveRealtime(tid: number): Promise<void> {
  if (process.platform !== 'linux' || tid < 0) return Promise.resolve();
  return new Promise((resolve) => execFile('chrt', ['-o', '-p', '0', String(tid)], () => resolve()));
}

/** Linux task ids of this process's threads (from /proc/self/task), the main thread included. */
export function processThreads(): number[] {
  try {
    return readdirSync('/proc/self/task')
      .map(Number)
      .filter((t) => Number.isInteger(t));
  } catch {
    return [];
  }
}

/**
 * SCHED_FIFO for every thread of this process but the main one (the loop's thread, the mock's, the
 * I/O threads that read the serial port, the garbage collector's helpers: a real-time thread that waits
 * for a normal one gains nothing), with `priorities` per task id where given and `priority` elsewhere.
 * The main thread (the dashboard, the disk) and the threads in `normal` (the live view's) stay at normal priority. Resolves with the first refusal,
 * or granted.
 */
export async function requestRealtimeProcess(priority: number, priorities: ReadonlyMap<number, number> = new Map(), normal: ReadonlySet<number> = new Set()): Promise<RtResult> {
  const tasks = processThreads().filter((t) => t !== process.pid && !normal.has(t));
  if (tasks.length === 0) return requestRealtime(-1, priority);
  for (const t of tasks) {
    const r = await requestRealtime(t, priorities.get(t) ?? priority);
    if (!r.granted) return r;
  }
  return { granted: true, priority };
}
