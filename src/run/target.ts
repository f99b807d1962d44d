/**
 * Opening the arm a run drives: the rig file's link (the line protocol or Firmata, `link.transport`)
 * to a serial port, or to the mock rig. The line-protocol mock runs in a thread of its own, on its own
 * clock, as a board is another computer (mock/mock-thread.ts); in virtual time (tests) it shares the
 * loop's thread and clock (run/virtual.ts). Both are composed in run/compose.ts.
 */
import type { Rig } from '../config/load.js';
import type { Injection } from '../mock/injections.js';
import type { MockThreadStats } from '../mock/mock-thread.js';
import type { MockWiring } from '../mock/wiring.js';
import type { Clock } from '../time/clock.js';
import type { Link } from '../transport/link.js';
import { openLinked, type Place, type PortPlace } from './compose.js';

/** Where the arm is: the rig file's simulated plant (the mock rig), or a serial port. */
export type Target = { kind: 'mock'; wiring?: MockWiring } | Omit<PortPlace, 'rt'>;

/** The mock rig's handle, for injections and its own account of its timing. */
export interface MockHandle {
  /** Applies an injection that acts on the rig (not on the host: busy, throw) now. */
  inject(i: Injection): void;
  /** Ends the mock; resolves with how its thread fared (undefined when it shares the loop's thread). */
  stop(): Promise<MockThreadStats | undefined>;
  /** The mock thread's Linux task id, or -1. */
  tid: number;
  /** How long the mock's thread has not run [s] (starved by a busy machine), if it has its own. */
  silentS?: () => number;
}

/** What was opened. */
export interface OpenedTarget {
  link: Link;
  mock?: MockHandle;
  /** One line for people: what this is. */
  describe: string;
  /** The board cuts its motors by itself when commands stop (our firmware; Firmata only with the twolink watchdog feature). */
  boardWatchdog: () => boolean;
}

/** Where a run's board is: the mock in a thread of its own (a board is another computer), or the port (`rt`: its relay asks for priority). */
export function placeOf(target: Target, rt = false): Place {
  return target.kind === 'mock' ? { kind: 'mock-thread', ...(target.wiring ? { wiring: target.wiring } : {}) } : { ...target, rt };
}

/** Opens the link of `rig` to `target` (compose.ts): a mock in a thread of its own, or the port. */
export async function openTarget(rig: Rig, target: Target, clock: Clock, o: { rt?: boolean } = {}): Promise<OpenedTarget> {
  const { end, link, boardWatchdog } = await openLinked(rig, placeOf(target, o.rt), clock);
  const remote = end.remote;
  return {
    link,
    ...(remote
      ? {
          mock: { inject: (i: Injection) => remote.inject(i), stop: () => remote.stop(), tid: remote.tid, silentS: () => remote.silentS() },
        }
      : {}),
    describe: end.describe,
    boardWatchdog,
  };
}
