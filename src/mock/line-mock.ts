/**
 * The mock rig assembled: the plant of a rig file's `plant` section, the board that speaks the line
 * protocol, and the USB-serial adapter between the board and the host, all on one clock. The host's
 * side of it is a serialport stream: through a binding in the same thread (virtual time, tests),
 * through a shared-memory cable to the rig's own thread (mock-remote.ts, the real-time default), or
 * on a pty (`twolink rig`).
 */
import { SerialPortStream } from '@serialport/stream';
import type { MockPart } from '../config/parts.js';
import { RigFileError } from '../config/rig.js';
import type { Clock } from '../time/clock.js';
import { mockBinding, type MockEnd } from './binding.js';
import { LineBoard } from './line-board.js';
import { Noise, type Plant } from './plant.js';
import { createPlant, type MockWiring } from './wiring.js';
import { UsbSerialAdapter } from './usb-adapter.js';

export interface LineMock {
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

/** The host-facing end of a board (either protocol) behind its USB-serial adapter. */
export class AdaptedEnd implements MockEnd {
  constructor(
    private readonly board: MockEnd,
    private readonly adapter: UsbSerialAdapter,
  ) {
    adapter.onDown = (b) => board.receive(b);
    board.onTransmit = (b) => adapter.up(b);
  }
  receive(bytes: Uint8Array): void {
    this.adapter.down(bytes);
  }
  get onTransmit(): (bytes: Buffer) => void {
    return this.adapter.onUp;
  }
  set onTransmit(fn: (bytes: Buffer) => void) {
    this.adapter.onUp = fn;
  }
  get hostBaudRate(): number | undefined {
    return this.board.hostBaudRate;
  }
  set hostBaudRate(v: number | undefined) {
    this.board.hostBaudRate = v;
  }
}

/** The parts of a line-protocol mock rig, not yet connected to a host. */
export interface LineMockParts {
  plant: Plant;
  board: LineBoard;
  adapter: UsbSerialAdapter;
  /** What the host's side connects to. */
  end: MockEnd;
  dispose(): void;
}

/** Builds the plant, the board and the adapter of `rig` (which must have a `plant` section) on `clock`. */
export function buildLineMock(rig: MockPart, clock: Clock, opts: { board?: string; wiring?: MockWiring } = {}): LineMockParts {
  if (!rig.plant) {
    throw new RigFileError(
      rig.file,
      'has no "plant" section: the mock rig needs the true arm to simulate (see rigs/mock-arm.json)',
      'plant',
    );
  }
  const plant = createPlant({ ...rig, plant: rig.plant }, clock.now(), opts.wiring);
  const noise = new Noise(rig.plant.seed + 1);
  const board = new LineBoard({
    clock,
    plant,
    baudRate: rig.link.baudRate,
    latency: rig.plant.latency,
    random: () => noise.uniform(),
    ...(opts.board ? { board: opts.board } : {}),
  });
  const adapter = new UsbSerialAdapter(clock, { kind: rig.plant.adapter.kind, latencyMs: rig.plant.adapter.latencyMs });
  const end = new AdaptedEnd(board, adapter);
  return {
    plant,
    board,
    adapter,
    end,
    dispose: () => {
      board.dispose();
      adapter.dispose();
    },
  };
}

/** The mock rig of a rig file in this thread, behind a serialport binding (virtual time, tests). */
export function createLineMock(rig: MockPart, clock: Clock, opts: { path?: string; board?: string; wiring?: MockWiring } = {}): LineMock {
  const parts = buildLineMock(rig, clock, opts);
  const path = opts.path ?? `mock:${rig.name}`;
  const binding = mockBinding(path, parts.end);
  return {
    plant: parts.plant,
    board: parts.board,
    path,
    openStream: (baudRate = rig.link.baudRate) =>
      new Promise((resolve, reject) => {
        const s = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
        s.open((err) => (err ? reject(err) : resolve(s)));
      }),
    unplug: () => binding.current()?.unplug(),
    dispose: () => parts.dispose(),
  };
}
