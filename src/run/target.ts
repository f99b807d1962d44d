/**
 * Opening the arm a run drives: the rig file's link (the line protocol or Firmata, `link.transport`)
 * to a serial port, or to the mock rig. The line-protocol mock runs in a thread of its own, on its own
 * clock, as a board is another computer (rig/mock-thread.ts); in virtual time (tests) it shares the
 * loop's thread and clock (run/virtual.ts). Transports load lazily, so the line path never loads
 * johnny-five.
 */
import { adapterName } from '../config/cable.js';
import type { Duplex } from 'node:stream';
import type { Rig } from '../config/load.js';
import type { Injection } from '../mock/injections.js';
import type { MockThreadStats } from '../mock/mock-thread.js';
import type { MockWiring } from '../mock/wiring.js';
import type { Clock } from '../time/clock.js';
import type { Link } from '../transport/link.js';
import { openSerialPort } from '../transport/open.js';

/** Where the arm is: the rig file's simulated plant (the mock rig), or a serial port. */
export type Target = { kind: 'mock'; wiring?: MockWiring } | { kind: 'port'; path: string; baudRate?: number };

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

/** Opens the link of `rig` to `target`. */
export async function openTarget(rig: Rig, target: Target, clock: Clock): Promise<OpenedTarget> {
  const baudRate = target.kind === 'port' ? target.baudRate ?? rig.link.baudRate : rig.link.baudRate;
  if (rig.link.transport === 'firmata') {
    const fl = await import('../transport/firmata-link.js');
    if (target.kind === 'mock') {
      // The Firmata mock board in a thread of its own, as the line protocol's.
      const { startRemoteMockRig } = await import('../mock/mock-remote.js');
      const mock = await startRemoteMockRig(rig, target.wiring);
      const stream = await mock.openStream(baudRate);
      const link = fl.createFirmataLink(rig, stream, mock.path, clock, { baudRate });
      return {
        link,
        mock: { inject: (i) => mock.inject(i), stop: () => mock.stop(), tid: mock.tid, silentS: () => mock.silentS() },
        describe: `Firmata (johnny-five) to the mock rig ${mock.path} (its own thread, ${rig.plant?.adapter.kind ?? '16u2'} adapter) at ${baudRate} baud`,
        boardWatchdog: () => link.hasBoardWatchdog,
      };
    }
    const stream = await openSerialPort(target.path, baudRate);
    const link = fl.createFirmataLink(rig, stream, target.path, clock, { baudRate });
    return { link, describe: `Firmata (johnny-five) on ${target.path} at ${baudRate} baud, cable: ${adapterName(rig.cable.adapter, rig.cable.latencyMs)} (rig file)`, boardWatchdog: () => link.hasBoardWatchdog };
  }
  const { LineLink } = await import('../transport/line-link.js');
  // A board wired otherwise than the README's table (the rig file's `wiring`, from twolink setup): the
  // link maps the joints to the board's inputs and outputs (transport/joints.ts).
  const make = (stream: Duplex, name: string): Link =>
    new LineLink({ stream, name, baudRate, clock, encoders: rig.encoders, ...(rig.wiring ? { wiring: rig.wiring } : {}), watchdogMs: rig.link.watchdogMs, handshakeMs: rig.link.handshakeMs });
  if (target.kind === 'mock') {
    const { startRemoteMockRig } = await import('../mock/mock-remote.js');
    const mock = await startRemoteMockRig(rig, target.wiring);
    const stream = await mock.openStream(baudRate);
    return {
      link: make(stream, mock.path),
      mock: { inject: (i) => mock.inject(i), stop: () => mock.stop(), tid: mock.tid, silentS: () => mock.silentS() },
      describe: `line protocol to the mock rig ${mock.path} (its own thread, ${rig.plant?.adapter.kind ?? '16u2'} adapter) at ${baudRate} baud`,
      boardWatchdog: () => true,
    };
  }
  const stream = await openSerialPort(target.path, baudRate);
  const cable = adapterName(rig.cable.adapter, rig.cable.latencyMs);
  return { link: make(stream, target.path), describe: `line protocol on ${target.path} at ${baudRate} baud, cable: ${cable} (rig file)`, boardWatchdog: () => true };
}
