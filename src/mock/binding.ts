/**
 * A serialport binding (the @serialport/bindings-interface contract, like serialport's MockBinding)
 * whose far end is a mock rig in the same thread. `new SerialPortStream({ binding, path, baudRate })`
 * over it is a real serialport stream: the host code above it cannot tell it from a board.
 *
 * Unlike MockBinding, the far end answers: bytes the host writes go to the rig's board, and the board's
 * bytes come back through `read()` when its UART has sent them (in real or virtual time).
 */
import type { BindingInterface, BindingPortInterface, OpenOptions } from '@serialport/bindings-interface' with {
  'resolution-mode': 'require',
};
import { CanceledError, onePortBinding, SimulatedPortBase, UnpluggedError } from '../protocol/binding-port.js';

/** The far end of the wire: what the rig exposes to a binding. */
export interface MockEnd {
  /** Bytes from the host. */
  receive(bytes: Uint8Array): void;
  /** Set by the binding: called with the board's bytes. */
  onTransmit: (bytes: Buffer) => void;
  /** Set by the binding: the baud rate the host opened the port at (a mismatch garbles the bytes). */
  hostBaudRate?: number | undefined;
}

/** One open port on a rig. */
export class MockPort extends SimulatedPortBase implements BindingPortInterface {
  isOpen = true;
  private queue: Buffer[] = [];
  private waiting: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private unplugged = false;
  /** Bytes written by the host, for tests. */
  bytesWritten = 0;

  constructor(
    private readonly end: MockEnd,
    options: OpenOptions,
  ) {
    super(options);
    end.hostBaudRate = options.baudRate;
    end.onTransmit = (bytes) => {
      if (!this.isOpen) return;
      this.queue.push(bytes);
      const w = this.waiting;
      this.waiting = undefined;
      w?.resolve();
    };
  }

  /** The cable is pulled: reads and writes fail as a vanished device's do (EIO). */
  unplug(): void {
    this.unplugged = true;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(new UnpluggedError('the device was unplugged (EIO)'));
  }

  async read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    if (this.unplugged) throw new UnpluggedError('the device was unplugged (EIO)');
    if (!this.isOpen) throw new CanceledError('Port is not open');
    while (this.queue.length === 0) {
      await new Promise<void>((resolve, reject) => (this.waiting = { resolve, reject }));
    }
    let n = 0;
    while (n < length && this.queue.length > 0) {
      const head = this.queue[0]!;
      const k = Math.min(head.length, length - n);
      head.copy(buffer, offset + n, 0, k);
      n += k;
      if (k === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(k);
    }
    return { buffer, bytesRead: n };
  }

  async write(buffer: Buffer): Promise<void> {
    if (this.unplugged) throw new UnpluggedError('the device was unplugged (EIO)');
    if (!this.isOpen) throw new CanceledError('Port is not open');
    this.bytesWritten += buffer.length;
    this.end.receive(Uint8Array.from(buffer));
  }

  async close(): Promise<void> {
    this.isOpen = false;
    this.end.onTransmit = () => {};
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(new CanceledError('Port is closed'));
  }

  protected onBaud(baudRate: number): void {
    this.end.hostBaudRate = baudRate;
  }
  override async flush(): Promise<void> {
    this.queue = [];
  }
}

/** A binding with one rig at one path. Opening another path fails as a missing device would. */
export function mockBinding(path: string, end: MockEnd): BindingInterface<MockPort> & { current(): MockPort | undefined } {
  return onePortBinding(path, (options) => new MockPort(end, options));
}

/**
 * Puts a rig's far end on a byte stream instead of a binding (a pty's far end, in real time): the
 * stream's bytes go to the board, the board's bytes to the stream. Returns the function that detaches.
 */
export function serveOnStream(
  end: MockEnd,
  stream: import('node:stream').Duplex,
  onDropped: (bytes: number) => void = () => {},
): () => void {
  const onData = (d: Buffer): void => end.receive(d);
  stream.on('data', onData);
  // A host that does not read (none has the port open, or it was killed): once 4 kB wait, what the
  // board sends is dropped, as a USB-serial adapter drops what the host does not fetch (else it piles
  // up here for the next session); `onDropped` says how much when the host reads again.
  let dropped = 0;
  end.onTransmit = (bytes) => {
    if (stream.destroyed) return;
    if (stream.writableLength >= 4096) {
      dropped += bytes.length;
      return;
    }
    if (dropped > 0) onDropped(dropped);
    dropped = 0;
    stream.write(bytes);
  };
  return () => {
    stream.removeListener('data', onData);
    end.onTransmit = () => {};
  };
}
