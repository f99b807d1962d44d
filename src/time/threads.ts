/**
 * Threads as Linux sees them: this thread's task id, a task's CPU time, and asking for real-time
 * scheduling (SCHED_FIFO) for one thread. Everything here degrades to "unknown" off Linux.
 */
import { execFile } from 'node:child_process';
import { openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import { priorityHowTo, raiseProcessPriority } from './priority.js';

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

/**
 * A clock of the time the operating system kept the calling thread waiting while it could run [ms,
 * cumulative]: the run-queue delay Linux's scheduler keeps per thread (the second field of
 * /proc/thread-self/schedstat, ns; Documentation/scheduler/sched-stats.rst). Time between two readings
 * of the wall clock minus the growth of this clock is what the thread itself had of the CPU (or spent
 * blocked on its own account). The file is opened once, in the thread that calls this, and re-read
 * from its start (one pread) on each call; undefined where there is no such file (not Linux, or a
 * kernel without scheduler statistics).
 */
export function stolenClockMs(): (() => number) | undefined {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(96);
  const read = (): number => {
    try {
      const n = readSync(fd, buf, 0, buf.length, 0);
      const text = buf.toString('latin1', 0, n);
      const a = text.indexOf(' ');
      const b = text.indexOf(' ', a + 1);
      const ns = Number(text.slice(a + 1, b < 0 ? undefined : b));
      return Number.isFinite(ns) && ns >= 0 ? ns / 1e6 : NaN;
    } catch {
      return NaN;
    }
  };
  return Number.isFinite(read()) ? read : undefined;
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
export function noRealtimeLine(who: string, why: string, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'linux')
    return `${who}: WARNING: normal priority (${why}): a busy machine may stop the arm (fault:watchdog or link-lost); to get more, ${priorityHowTo(platform)}`;
  return `${who}: WARNING: no real-time priority (${why}): a busy machine may stop the arm (fault:watchdog or link-lost); to get it, ${rtHowTo()}`;
}

/** What came of asking for real-time scheduling (off Linux: for a raised process priority, `what` it is). */
export type RtResult = { granted: true; priority: number; what?: string } | { granted: false; reason: string };

/**
 * Asks Linux for SCHED_FIFO at `priority` for task `tid` (with util-linux's `chrt`). Needs
 * CAP_SYS_NICE or an `rtprio` limit (ulimit -r) of at least `priority`; the reason says how to allow it.
 */
export function requestRealtime(tid: number, priority = 40, opts: { resetOnFork?: boolean; allTasks?: boolean } = {}): Promise<RtResult> {
  if (process.platform !== 'linux' || tid < 0)
    return Promise.resolve({ granted: false, reason: 'real-time scheduling is only offered on Linux' });
  // -R (SCHED_RESET_ON_FORK): what the thread starts (a process, a thread) begins at normal priority.
  // -a (allTasks, `tid` a process id): every thread of that process.
  const args = ['-f', ...(opts.resetOnFork ? ['-R'] : []), ...(opts.allTasks ? ['-a'] : []), '-p', String(priority), String(tid)];
  return new Promise((resolve) => {
    execFile('chrt', args, (err, _out, stderr) => {
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

/**
 * The scheduling policy of task `tid` of this process (Linux's number: 0 SCHED_OTHER, 1 SCHED_FIFO,
 * 2 SCHED_RR, ...; field 41 of /proc/self/task/<tid>/stat, proc(5)), or -1 if unknown.
 */
export function schedPolicy(tid: number): number {
  try {
    const s = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    const p = Number(f[38]);
    return Number.isInteger(p) ? p : -1;
  } catch {
    return -1;
  }
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
 *
 * A main thread that inherited a real-time policy (started by a real-time thread: `chrt -f 40 twolink
 * ...`, or a test whose plant thread runs at 44) is put back to normal first: at its inherited
 * priority it would outrank the loop's thread, and at the same priority as a simulated rig's thread
 * (SCHED_FIFO does not share the CPU between equals) hold it up (measured: a stock Firmata reach
 * under load 16-20 whose host had inherited 44 from the test's plant thread).
 */
export async function requestRealtimeProcess(
  priority: number,
  priorities: ReadonlyMap<number, number> = new Map(),
  normal: ReadonlySet<number> = new Set(),
): Promise<RtResult> {
  // macOS, Windows: no SCHED_FIFO for a user; the process's priority as far as os.setPriority goes (priority.ts).
  if (process.platform !== 'linux') {
    const p = raiseProcessPriority(process.pid);
    return p.kind === 'raised' ? { granted: true, priority: p.value, what: p.name } : { granted: false, reason: p.reason };
  }
  if (schedPolicy(process.pid) > 0) await leaveRealtime(process.pid);
  const tasks = processThreads().filter((t) => t !== process.pid && !normal.has(t));
  if (tasks.length === 0) return requestRealtime(-1, priority);
  for (const t of tasks) {
    const r = await requestRealtime(t, priorities.get(t) ?? priority);
    if (!r.granted) return r;
  }
  return { granted: true, priority };
}
