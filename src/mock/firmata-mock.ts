/**
 * The mock rig with stock firmware: the plant of a rig file's `plant` section, a board that speaks
 * Firmata (ConfigurableFirmata + FirmataEncoder, wired as the rig file's `firmata` section says), and
 * a serialport stream to it in the same thread, all on one clock. `serveFirmataMock` puts the same
 * board on any stream instead (a pty, for the rig in its own process).
 *
 * The binding here adds to src/mock/binding.ts what a USB cable does: the board sees the baud rate the
 * host opened the port at (a mismatch garbles the bytes), and `unplug()` makes the port vanish.
 */
import type { Duplex } from 'node:stream';
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortStatus,
  SetOptions,
  UpdateOptions,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { SerialPortStream } from '@serialport/stream';
import type { MockPart } from '../config/parts.js';
import { RigFileError } from '../config/rig.js';
import type { FirmwareFeatures } from '../protocol/firmata.js';
import { isWiringIssue, type MotorPins } from '../protocol/firmata-wiring.js';
import { resolveFirmataWiring } from '../protocol/firmata-shields.js';
import type { Clock } from '../time/clock.js';
import { mockBinding, serveOnStream } from './binding.js';
import { FirmataBoard, type FirmwareId } from './firmata-board.js';
import { Noise, type Plant } from './plant.js';
import { createPlant, type MockWiring } from './wiring.js';
import { AdaptedEnd } from './line-mock.js';
import { UsbSerialAdapter } from './usb-adapter.js';

export interface FirmataMockOptions {
  /** Path the binding answers to. @default `mock:<rig name>` */
  path?: string;
  /** The board's baud rate when it differs from the rig file's (to test a mismatch). */
  boardBaudRate?: number;
  /** Features of the firmware. @default { encoder: true } (stock: no watchdog; `watchdog: true` adds twolink's FirmataWatchdog) */
  features?: FirmwareFeatures;
  /** Timer0's millis() fraction at power-on (0..124). @default 0 */
  millisFract0?: number;
  firmware?: FirmwareId;
  /** Firmata protocol version. */
  protocol?: [number, number];
  /** Reset-to-first-message time [s]. @default 0 */
  bootDelayS?: number;
  /** The arm wired wrong on purpose (src/mock/wiring.ts). */
  wiring?: MockWiring;
}

export interface FirmataMock {
  readonly plant: Plant;
  readonly board: FirmataBoard;
  /** The motor pins per joint, resolved (shield presets expanded). */
  readonly motors: MotorPins[];
  readonly path: string;
  /** Opens a serialport stream to the board (the host's side of the cable) at `baudRate`. */
  openStream(baudRate?: number): Promise<SerialPortStream>;
  /** The cable is pulled: the open port's reads and writes fail and the stream closes as disconnected. */
  unplug(): void;
  dispose(): void;
}

/** Builds the board of a rig file (which must have `plant` and `firmata` sections). */
export function createFirmataBoard(
  rig: MockPart,
  clock: Clock,
  opts: FirmataMockOptions = {},
): { plant: Plant; board: FirmataBoard; motors: MotorPins[] } {
  if (!rig.plant) {
    throw new RigFileError(
      rig.file,
      'has no "plant" section: the mock rig needs the true arm to simulate (see rigs/mock-arm-firmata.json)',
      'plant',
    );
  }
  const f = rig.firmata;
  if (!f)
    throw new RigFileError(
      rig.file,
      'has no "firmata" section: the Firmata mock rig needs the wiring (see rigs/mock-arm-firmata.json)',
      'firmata',
    );
  const wiring = resolveFirmataWiring(f);
  if (isWiringIssue(wiring)) throw new RigFileError(rig.file, `${wiring.field}: ${wiring.message}`, wiring.field);
  const { layout, motors } = wiring;
  const plant = createPlant({ ...rig, plant: rig.plant }, clock.now(), opts.wiring);
  const noise = new Noise(rig.plant.seed + 2);
  const board = new FirmataBoard({
    clock,
    plant,
    baudRate: opts.boardBaudRate ?? rig.link.baudRate,
    layout,
    motors,
    sensors: f.sensors,
    ...(f.linkSensors ? { linkSensors: f.linkSensors } : {}),
    latency: rig.plant.latency,
    random: () => noise.uniform(),
    ...(opts.features ? { features: opts.features } : {}),
    ...(opts.firmware ? { firmware: opts.firmware } : {}),
    ...(opts.protocol ? { protocol: opts.protocol } : {}),
    ...(opts.bootDelayS !== undefined ? { bootDelayS: opts.bootDelayS } : {}),
    ...(opts.millisFract0 !== undefined ? { millisFract0: opts.millisFract0 } : {}),
  });
  return { plant, board, motors };
}

class DisconnectError extends Error {}

/** A port of the rig binding that tells the board the host's baud rate and can be unplugged. */
class CablePort implements BindingPortInterface {
  private unplugged = false;
  private failPending: ((e: Error) => void) | undefined;
  constructor(
    private readonly inner: BindingPortInterface,
    private readonly board: FirmataBoard,
  ) {
    board.hostBaudRate = inner.openOptions.baudRate;
  }
  get isOpen(): boolean {
    return this.inner.isOpen;
  }
  get openOptions(): BindingPortInterface['openOptions'] {
    return this.inner.openOptions;
  }
  unplug(): void {
    this.unplugged = true;
    this.failPending?.(new DisconnectError('the device was unplugged (EIO)'));
  }
  read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    if (this.unplugged) return Promise.reject(new DisconnectError('the device was unplugged (EIO)'));
    return new Promise((resolve, reject) => {
      this.failPending = reject;
      this.inner.read(buffer, offset, length).then(resolve, reject);
    });
  }
  write(buffer: Buffer): Promise<void> {
    if (this.unplugged) return Promise.reject(new DisconnectError('the device was unplugged (EIO)'));
    return this.inner.write(buffer);
  }
  close(): Promise<void> {
    this.board.hostBaudRate = undefined;
    return this.inner.close();
  }
  async update(options: UpdateOptions): Promise<void> {
    await this.inner.update(options);
    this.board.hostBaudRate = options.baudRate;
  }
  set(options: SetOptions): Promise<void> {
    return this.inner.set(options);
  }
  get(): Promise<PortStatus> {
    return this.inner.get();
  }
  getBaudRate(): Promise<{ baudRate: number }> {
    return this.inner.getBaudRate();
  }
  flush(): Promise<void> {
    return this.inner.flush();
  }
  drain(): Promise<void> {
    return this.inner.drain();
  }
}

/** Builds the Firmata mock rig of a rig file, reachable in-process through a serialport stream. */
export function createFirmataMock(rig: MockPart, clock: Clock, opts: FirmataMockOptions = {}): FirmataMock {
  const { plant, board, motors } = createFirmataBoard(rig, clock, opts);
  const path = opts.path ?? `mock:${rig.name}`;
  // Behind the same USB-serial adapter model as the line-protocol mock (the rig file's plant.adapter).
  const adapter = new UsbSerialAdapter(clock, { kind: rig.plant!.adapter.kind, latencyMs: rig.plant!.adapter.latencyMs });
  const inner = mockBinding(path, new AdaptedEnd(board, adapter));
  let current: CablePort | undefined;
  const binding: BindingInterface<CablePort> = {
    list: () => inner.list(),
    async open(options: OpenOptions): Promise<CablePort> {
      current = new CablePort(await inner.open(options), board);
      return current;
    },
  };
  return {
    plant,
    board,
    motors,
    path,
    openStream: (baudRate = rig.link.baudRate) =>
      new Promise((resolve, reject) => {
        const s = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
        s.open((err) => (err ? reject(err) : resolve(s)));
      }),
    unplug: () => current?.unplug(),
    dispose: () => {
      board.dispose();
      adapter.dispose();
    },
  };
}

/**
 * Serves the Firmata mock rig of a rig file on an open stream (a pty's far end, in real time): the
 * board's bytes are written to the stream, the stream's bytes go to the board. Returns a function
 * that stops it.
 */
export function serveFirmataMock(
  rig: MockPart,
  stream: Duplex,
  clock: Clock,
  opts: FirmataMockOptions = {},
): { plant: Plant; board: FirmataBoard; stop: () => void } {
  const { plant, board } = createFirmataBoard(rig, clock, opts);
  const detach = serveOnStream(board, stream, (n) =>
    process.stderr.write(`twolink rig: the host reads again; ${n} bytes the board sent meanwhile were dropped\n`),
  );
  return {
    plant,
    board,
    stop: () => {
      detach();
      board.dispose();
    },
  };
}
