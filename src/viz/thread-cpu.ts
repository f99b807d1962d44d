/**
 * The calling thread's CPU time, for the live server's cost of handling client messages (viz/live.ts,
 * LiveStats.cpuSampledNs), and what reading it costs.
 */
import { readFileSync } from 'node:fs';

/** The calling thread's CPU time [ns] (Linux /proc/thread-self/schedstat: time on a CPU), NaN where there is none. */
export function threadCpuNs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}

/** What reading threadCpuNs costs [ns]: the least of 20 back-to-back pairs; -1 where it cannot be read. */
export function cpuReadCost(): number {
  let least = Infinity;
  for (let k = 0; k < 20; k++) {
    const a = threadCpuNs();
    least = Math.min(least, threadCpuNs() - a);
  }
  return Number.isFinite(least) ? least : -1;
}
