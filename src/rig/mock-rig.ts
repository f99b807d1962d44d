/**
 * The mock rig assembled: the plant of a rig file's `plant` section, the board that speaks the line
 * protocol, and a serialport stream to it (in the same thread), all on one clock.
 */
import { SerialPortStream } from '@serialport/stream';
import type { Rig } from '../config/load.js';
import { RigFileError } from '../config/rig.js';
import type { Clock } from '../time/clock.js';
import { rigBinding, serveOnStream } from './binding.js';
import { LineBoard } from './line-board.js';
import { Noise, Plant } from './plant.js';

export interface MockRig {
  readonly plant: Plant;
  readonly board: LineBoard;
  /** The path the binding answers to. */
  readonly path: string;
  /** Opens a serialport stream to the board (the host's side of the cable). */
  openStream(baudRate?: number): Promise<SerialPortStream>;
  /** The cable is pulled: the open port's reads and writes fail and the stream closes as disconnected. */
  unplug(): void;
  dispose(): void;
}

/** Builds the mock rig of a rig file (which must have a `plant` section). */
export function createMockRig(rig: Rig, clock: Clock, opts: { path?: string; board?: string } = {}): MockRig {
  if (!rig.plant) {
    throw new RigFileError(rig.file, 'has no "plant" section: the mock rig needs the true arm to simulate (see rigs/mock-arm.json)', 'plant');
  }
  const plant = new Plant(rig.plant, rig.encoders, clock.now());
  const noise = new Noise(rig.plant.seed + 1);
  const board = new LineBoard({
    clock,
    plant,
    baudRate: rig.link.baudRate,
    latency: rig.plant.latency,
    random: () => noise.uniform(),
    ...(opts.board ? { board: opts.board } : {}),
  });
  const path = opts.path ?? `mock:${rig.name}`;
  const binding = rigBinding(path, board);
  return {
    plant,
    board,
    path,
    openStream: (baudRate = rig.link.baudRate) =>
      new Promise((resolve, reject) => {
        const s = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
        s.open((err) => (err ? reject(err) : resolve(s)));
      }),
    unplug: () => binding.current()?.unplug(),
    dispose: () => board.dispose(),
  };
}

/** Puts the line-protocol mock board of `rig` on any byte stream (a pty for the rig in its own process). */
export function serveLineRig(rig: Rig, stream: import('node:stream').Duplex, clock: Clock): { plant: Plant; board: LineBoard; stop: () => void } {
  if (!rig.plant) throw new RigFileError(rig.file, 'has no "plant" section: the mock rig needs the true arm to simulate', 'plant');
  const plant = new Plant(rig.plant, rig.encoders, clock.now());
  const noise = new Noise(rig.plant.seed + 1);
  const board = new LineBoard({ clock, plant, baudRate: rig.link.baudRate, latency: rig.plant.latency, random: () => noise.uniform() });
  const detach = serveOnStream(board, stream);
  return {
    plant,
    board,
    stop: () => {
      detach();
      board.dispose();
    },
  };
}
