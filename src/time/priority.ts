/**
 * Priority for the process that runs the loop on every OS: Linux's SCHED_FIFO lives in threads.ts
 * (per thread, with chrt); here is what macOS and Windows give a user without admin rights, through
 * `os.setPriority` (a process's nice value on macOS, its priority class on Windows).
 *
 * - Windows: a user may raise a process to HIGH_PRIORITY_CLASS. REALTIME_PRIORITY_CLASS
 *   (os.constants.priority.PRIORITY_HIGHEST) "will be silently reduced to PRIORITY_HIGH" without
 *   elevated privileges (Node's os.setPriority docs), and with them it preempts the OS's own work
 *   (Microsoft's Win32_Process SetPriority: a real-time process can keep disk caches from flushing and
 *   the mouse from answering). twolink asks for HIGH and no more.
 * - macOS (and any Unix without SCHED_FIFO for us): a negative nice value needs root; a user gets
 *   EACCES and stays at normal priority, which twolink says.
 *
 * The result is a value; the start-up line is derived from it at the edge (threads.ts noRealtimeLine
 * for a refusal, the run's `priority:` line otherwise).
 */
import os from 'node:os';

/** The part of node:os this needs (tests pass their own). */
export interface PriorityOs {
  setPriority(pid: number, priority: number): void;
  getPriority(pid: number): number;
}

/** What a process got. */
export type ProcessPriority =
  /** `os.setPriority` took: the value read back (Windows: the class's number, -14 for HIGH). */
  | { kind: 'raised'; value: number; name: string }
  /** Nothing above normal: why (the OS's refusal). */
  | { kind: 'normal'; reason: string };

const P = os.constants.priority;

/** Windows's priority classes by the number `os.getPriority` gives for them (node's os.constants.priority). */
function windowsClass(value: number): string {
  if (value <= P.PRIORITY_HIGHEST) return 'REALTIME priority class';
  if (value <= P.PRIORITY_HIGH) return 'HIGH priority class';
  if (value <= P.PRIORITY_ABOVE_NORMAL) return 'ABOVE_NORMAL priority class';
  return 'NORMAL priority class';
}

/** The asks, best first, on every OS: HIGH (on Windows not REALTIME, see the file's comment), then ABOVE_NORMAL. */
export const PRIORITY_ASKS: readonly number[] = [P.PRIORITY_HIGH, P.PRIORITY_ABOVE_NORMAL];

/**
 * Raises process `pid` as far as the OS lets this user (PRIORITY_ASKS), reads back what it got. Never
 * throws: a refusal is a `normal` result with the OS's words.
 */
export function raiseProcessPriority(pid: number, platform: NodeJS.Platform = process.platform, api: PriorityOs = os): ProcessPriority {
  let refusal = '';
  for (const ask of PRIORITY_ASKS) {
    try {
      api.setPriority(pid, ask);
    } catch (e) {
      refusal ||= e instanceof Error ? e.message : String(e);
      continue;
    }
    let value: number;
    try {
      value = api.getPriority(pid);
    } catch (e) {
      return { kind: 'normal', reason: `the priority was set but cannot be read back: ${e instanceof Error ? e.message : String(e)}` };
    }
    if (!Number.isFinite(value) || value >= 0) continue;
    return { kind: 'raised', value, name: platform === 'win32' ? windowsClass(value) : `nice ${value}` };
  }
  const how =
    platform === 'darwin'
      ? 'macOS gives a user no priority above normal without root (sudo)'
      : platform === 'win32'
        ? 'Windows refused even ABOVE_NORMAL'
        : 'a negative nice value needs root or CAP_SYS_NICE';
  return { kind: 'normal', reason: `${how}${refusal ? `: ${refusal}` : ''}` };
}

/** How to get priority on this OS (for the line of a process left at normal priority). */
export function priorityHowTo(platform: NodeJS.Platform = process.platform): string {
  if (platform === 'darwin')
    return 'start twolink with sudo for a negative nice value (macOS has no real-time class for a user); close other busy programs';
  if (platform === 'win32')
    return 'twolink asks Windows for the HIGH priority class, which a user may set; check that no policy forbids it (Task Manager > Details > Set priority shows it)';
  return 'run as root or give node CAP_SYS_NICE';
}
