/**
 * tune on the rig file's simulated arm in virtual time: the line protocol's mock board and its plant
 * on a VirtualClock, the host's LineLink to it (through the rig's wiring, as the loop sees it), and
 * `drive`, which moves the clock until a promise settles. Figures from it are virtual-time figures.
 */
import type { Rig } from '../config/load.js';
import { createMockRig } from '../mock/mock-rig.js';
import { runUntilSettled, VirtualClock } from '../time/clock.js';
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
