/**
 * tune on the rig file's simulated arm in virtual time (run/compose.ts): the mock board of the rig
 * file's protocol and its plant on a VirtualClock, the host's link to it (through the rig's wiring,
 * as the loop sees it), and `drive`, which moves the clock until a promise settles. Figures from it are virtual-time figures.
 */
import type { Rig } from '../config/load.js';
import { compose } from '../run/compose.js';
import type { VirtualClock } from '../time/clock.js';
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
  const c = await compose(rig, { kind: 'mock' }, { time: 'virtual', stepS: 0.0005 });
  const plant = c.end.local!.mock.plant;
  return { link: c.link, clock: c.clock as VirtualClock, drive: c.drive, duty: () => plant.duty, close: c.close };
}
