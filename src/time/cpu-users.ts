/**
 * Who had the CPU over an interval: every thread of every process on this machine, from /proc
 * (proc(5): /proc/<pid>/task/<tid>/stat, fields utime, stime, rt_priority, policy), read once at each
 * end of the interval. For a simulated board that fell behind the wall clock: what else ran then, at
 * which scheduling class and priority. Linux only; elsewhere the snapshot is empty.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One thread's CPU time so far and its scheduling. */
interface TaskTicks {
  pid: number;
  tid: number;
  comm: string;
  /** utime + stime [clock ticks, USER_HZ = 100 on Linux]. */
  ticks: number;
  /** Linux's policy number (0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR, 3 BATCH, 5 IDLE). */
  policy: number;
  /** SCHED_FIFO/RR priority (1..99), 0 for the normal classes. */
  rtPrio: number;
}

/** The threads' CPU times at one instant, keyed by pid/tid, and when [ms, performance.now()]. */
export interface CpuSnapshot {
  atMs: number;
  tasks: Map<string, TaskTicks>;
}

/** Reads every thread's stat file (threads that end meanwhile are skipped). */
export function cpuSnapshot(): CpuSnapshot {
  const tasks = new Map<string, TaskTicks>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return { atMs: performance.now(), tasks };
  }
  for (const pid of pids) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
        const open = s.indexOf('(');
        const close = s.lastIndexOf(')');
        const f = s.slice(close + 2).split(' ');
        tasks.set(`${pid}/${tid}`, {
          pid: Number(pid),
          tid: Number(tid),
          comm: s.slice(open + 1, close),
          ticks: Number(f[11]) + Number(f[12]),
          rtPrio: Number(f[37]),
          policy: Number(f[38]),
        });
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return { atMs: performance.now(), tasks };
}

/** One thread's share of the interval between two snapshots. */
export interface CpuUser {
  pid: number;
  tid: number;
  comm: string;
  /** The process's command line (cut to 80 characters), where it could still be read. */
  cmd: string;
  /** `FIFO 45`, `RR 10`, or `normal`. */
  sched: string;
  /** Of one core over the interval [%]. */
  pct: number;
}

const POLICY: Record<number, string> = { 1: 'FIFO', 2: 'RR' };

/** The threads that used the most CPU between `a` and `b` (at least `minPct` of a core), busiest first. */
export function cpuUsers(a: CpuSnapshot, b: CpuSnapshot, n = 8, minPct = 5): CpuUser[] {
  const seconds = (b.atMs - a.atMs) / 1000;
  if (!(seconds > 0)) return [];
  const users: CpuUser[] = [];
  for (const [key, t] of b.tasks) {
    const before = a.tasks.get(key)?.ticks ?? 0;
    const pct = ((t.ticks - before) / 100 / seconds) * 100;
    if (pct < minPct) continue;
    const sched = POLICY[t.policy] ? `${POLICY[t.policy]} ${t.rtPrio}` : 'normal';
    users.push({ pid: t.pid, tid: t.tid, comm: t.comm, cmd: '', sched, pct });
  }
  users.sort((x, y) => y.pct - x.pct);
  const top = users.slice(0, n);
  for (const u of top) {
    try {
      u.cmd = readFileSync(`/proc/${u.pid}/cmdline`, 'latin1').replace(/\0+$/, '').replace(/\0/g, ' ').slice(0, 80);
    } catch {
      u.cmd = '(ended)';
    }
  }
  return top;
}

/** The users in one line: `fil_harness [FIFO 45] 41 %, node (pid 8075 tid 8075) [FIFO 44] 24 %, ...`. */
export function cpuUsersText(users: readonly CpuUser[]): string {
  if (users.length === 0) return 'no thread used 5 % of a core or more';
  return users
    .map((u) => `${u.cmd || u.comm} (pid ${u.pid}${u.tid !== u.pid ? ` tid ${u.tid}` : ''}) [${u.sched}] ${u.pct.toFixed(0)} %`)
    .join('; ');
}
