/**
 * tune on the rig file's simulated arm (run/compose.ts): in virtual time, the mock board of the rig
 * file's protocol and its plant on a VirtualClock, the host's link to it (through the rig's wiring, as
 * the loop sees it), and `drive`, which moves the clock until a promise settles: virtual-time figures.
 * `openTuneMockRealtime`: the same mock in a thread of its own in real time, as `twolink run --mock`
 * runs it (mock-remote.ts), its samples on its own clock: real-time figures.
 */
import type { Rig } from '../config/load.js';
import { compose, openLinked } from '../run/compose.js';
import { RealClock, type VirtualClock } from '../time/clock.js';
import { requestRealtime, threadId, type RtResult } from '../time/threads.js';
import type { Link } from '../transport/link.js';

export interface OpenedMock {
  link: Link;
  clock: VirtualClock;
  drive: <T>(p: Promise<T>) => Promise<T>;
  close: () => Promise<void>;
  /** The simulated arm's duties as the board applies them (the mock only). */
  duty?: () => readonly number[];
}

export async function openTuneMock(rig: Rig): Promise<OpenedMock> {
  if (!rig.plant) throw new Error(`${rig.file} has no "plant" section: nothing to simulate`);
  const c = await compose(rig, { kind: 'mock' }, { time: 'virtual', stepS: 0.0005 });
  const plant = c.end.local!.mock.plant;
  return { link: c.link, clock: c.clock, drive: c.drive, duty: () => plant.duty, close: c.close };
}

/** What the real-time mock ran with: SCHED_FIFO asked for and granted (or why not) for the host's and the mock's threads. */
export interface RealtimeMock extends Omit<OpenedMock, 'clock'> {
  rt: { host: RtResult; mock: RtResult } | null;
  /** The mock thread's account of its timing once closed (its timers' lateness, starvation). */
  mockStats(): { maxLateMs: number; starvedMs: number } | undefined;
}

/** The rig's mock in its own thread in real time; with `rt`, SCHED_FIFO asked for both threads (as `twolink run` does: granted or not, said). */
export async function openTuneMockRealtime(rig: Rig, rt: boolean): Promise<RealtimeMock> {
  if (!rig.plant) throw new Error(`${rig.file} has no "plant" section: nothing to simulate`);
  const clock = new RealClock();
  const { end, link } = await openLinked(rig, { kind: 'mock-thread' }, clock);
  const remote = end.remote!;
  const granted = rt ? { host: await requestRealtime(threadId(), 40), mock: await requestRealtime(remote.tid, 45) } : null;
  let stats: { maxLateMs: number; starvedMs: number } | undefined;
  return {
    link,
    rt: granted,
    drive: (p) => p,
    mockStats: () => stats,
    close: async () => {
      await link.close();
      const s = await remote.stop();
      if (s) stats = { maxLateMs: s.maxLateMs, starvedMs: s.starvedMs };
    },
  };
}
