/**
 * tune on the rig file's simulated arm in virtual time: the line protocol's mock board and its plant
 * on a VirtualClock, the host's LineLink to it (through the rig's wiring, as the loop sees it), and
 * `drive`, which moves the clock until a promise settles. Figures from it are virtual-time figures.
 * `openTuneMockRealtime`: the same mock in a thread of its own in real time, as `twolink run --mock`
 * runs it (mock-remote.ts), its samples on its own clock; real-time figures.
 */
import type { Rig } from '../config/load.js';
import { createMockRig } from '../mock/mock-rig.js';
import { startRemoteMockRig } from '../mock/mock-remote.js';
import { RealClock, runUntilSettled, VirtualClock } from '../time/clock.js';
import { requestRealtime, threadId, type RtResult } from '../time/threads.js';
import { LineLink } from '../transport/line-link.js';
import type { Link } from '../transport/link.js';

export interface OpenedMock {
  link: Link;
  clock: VirtualClock;
  drive<T>(p: Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The simulated arm's duties as the board applies them (the mock only). */
  duty?: () => readonly number[];
}

export async function openTuneMock(rig: Rig): Promise<OpenedMock> {
  if (!rig.plant) throw new Error(`${rig.file} has no "plant" section: nothing to simulate`);
  const clock = new VirtualClock();
  const mock = createMockRig(rig, clock);
  const stream = await mock.openStream();
  const link: Link = new LineLink({ stream, name: mock.path, baudRate: rig.link.baudRate, clock, encoders: rig.encoders, ...(rig.wiring ? { wiring: rig.wiring } : {}), watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  const drive = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p, { stepS: 0.0005, maxS: 3600, maxRealMs: 3_600_000 });
  return {
    link,
    clock,
    drive,
    duty: () => mock.plant.duty,
    close: async () => {
      await drive(link.close());
      mock.dispose();
    },
  };
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
  const mock = await startRemoteMockRig(rig);
  const stream = await mock.openStream(rig.link.baudRate);
  const link: Link = new LineLink({ stream, name: mock.path, baudRate: rig.link.baudRate, clock, encoders: rig.encoders, ...(rig.wiring ? { wiring: rig.wiring } : {}), watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  const granted = rt ? { host: await requestRealtime(threadId(), 40), mock: await requestRealtime(mock.tid, 45) } : null;
  let stats: { maxLateMs: number; starvedMs: number } | undefined;
  return {
    link,
    rt: granted,
    drive: (p) => p,
    mockStats: () => stats,
    close: async () => {
      await link.close();
      const s = await mock.stop();
      if (s) stats = { maxLateMs: s.maxLateMs, starvedMs: s.starvedMs };
    },
  };
}
