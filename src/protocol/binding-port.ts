/**
 * What every serialport binding port of twolink shares (the tty binding, the in-thread mock's, the
 * cable to the mock's thread): the open options filled with serialport's defaults, and the two errors
 * serialport tells apart (a canceled read on a closed port; a device that vanished).
 */
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  PortStatus,
  SetOptions,
  UpdateOptions,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };

/** `options` with serialport's defaults for what it leaves out (8N1, locked, no flow control). */
export function fullOpenOptions(options: OpenOptions): Required<OpenOptions> {
  return {
    dataBits: 8,
    lock: true,
    stopBits: 1,
    parity: 'none',
    rtscts: false,
    xon: false,
    xoff: false,
    xany: false,
    hupcl: true,
    ...options,
  };
}

/** A read or write on a port that was closed: `canceled`, so serialport ends quietly. */
export class CanceledError extends Error {
  readonly canceled = true;
}

/** A read or write of a vanished USB device: not `canceled`, so serialport reports a disconnection. */
export class UnpluggedError extends Error {}

/**
 * The line settings of a simulated port (a mock's, the cable to the mock's thread): the baud rate the
 * host set, which `onBaud` passes on to the far end (a mismatch garbles the bytes there); the modem
 * lines always up. Subclasses add read, write and close.
 */
export abstract class SimulatedPortBase {
  readonly openOptions: Required<OpenOptions>;
  constructor(options: OpenOptions) {
    this.openOptions = fullOpenOptions(options);
  }
  /** The host set a new baud rate. */
  protected abstract onBaud(baudRate: number): void;
  async update(options: UpdateOptions): Promise<void> {
    (this.openOptions as { baudRate: number }).baudRate = options.baudRate;
    this.onBaud(options.baudRate);
  }
  async set(_options: SetOptions): Promise<void> {}
  async get(): Promise<PortStatus> {
    return { cts: true, dsr: true, dcd: true };
  }
  async getBaudRate(): Promise<{ baudRate: number }> {
    return { baudRate: this.openOptions.baudRate };
  }
  async flush(): Promise<void> {}
  async drain(): Promise<void> {}
}

/**
 * A binding with one simulated device at one path: `list` shows it, `open` of another path fails as a
 * missing device's does, and a second open while one is open fails as a locked port's does.
 * `current()` is the port last opened.
 */
export function onePortBinding<P extends BindingPortInterface>(
  path: string,
  open: (options: OpenOptions) => P,
): BindingInterface<P> & { current(): P | undefined } {
  let port: P | undefined;
  return {
    current: () => port,
    async list(): Promise<PortInfo[]> {
      return [
        {
          path,
          manufacturer: 'twolink mock rig',
          serialNumber: undefined,
          pnpId: undefined,
          locationId: undefined,
          productId: undefined,
          vendorId: undefined,
        },
      ];
    },
    async open(options: OpenOptions): Promise<P> {
      if (options.path !== path) throw new Error(`Error: No such file or directory, cannot open ${options.path}`);
      if (port?.isOpen) throw new Error(`Error: Resource temporarily unavailable, cannot open ${path}: the port is in use`);
      port = open(options);
      return port;
    },
  };
}
