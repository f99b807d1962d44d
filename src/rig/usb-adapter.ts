/**
 * The USB-serial adapter between the laptop and the board's UART, as the mock rig models it. A pty
 * has none of this; a real cable does (the adapters' USB frame and latency-timer behaviour, as their
 * datasheets and the Linux usb-serial drivers describe it):
 * - `16u2`: the Uno's ATmega16U2 (USB CDC, full speed). Its firmware sends what the UART received
 *   when its flush timer expires (Timer0 overflow, every 1.024 ms) or 64 bytes are waiting; what the
 *   host sends goes out on the bus at the next 1 ms USB frame.
 * - `ch340`: as the 16U2, with 32-byte packets.
 * - `ftdi`: FT232R: the chip holds received bytes until 62 are waiting or its latency timer expires
 *   (16 ms by default; 1 ms when tuned in /sys/bus/usb-serial/devices/ttyUSBn/latency_timer).
 * - `none`: bytes pass at once (the pty rig's own wire, for tests of the protocol alone).
 *
 * Up is board -> host, down is host -> board. Time comes from the board's clock.
 */
import type { Clock, TimerHandle } from '../time/clock.js';

export type AdapterKind = 'none' | '16u2' | 'ch340' | 'ftdi';

export interface AdapterOptions {
  kind: AdapterKind;
  /** FTDI latency timer [ms]. @default 16 */
  latencyMs?: number;
}

/** USB full-speed frame [s]. */
const FRAME_S = 0.001;

export class UsbSerialAdapter {
  /** Bytes towards the host, when the adapter releases them. */
  onUp: (bytes: Buffer) => void = () => {};
  /** Bytes towards the board's UART. */
  onDown: (bytes: Uint8Array) => void = () => {};
  private upBuf: Buffer[] = [];
  private upBytes = 0;
  private upTimer: TimerHandle | undefined;
  private downBuf: Uint8Array[] = [];
  private downTimer: TimerHandle | undefined;
  private readonly flushS: number;
  private readonly packet: number;
  /** Phase of the USB frames against the board's clock [s] (fixed, arbitrary). */
  private readonly phase: number;

  constructor(
    private readonly clock: Clock,
    readonly o: AdapterOptions,
  ) {
    this.flushS = o.kind === 'ftdi' ? (o.latencyMs ?? 16) / 1000 : 0.001024;
    this.packet = o.kind === 'ftdi' ? 62 : o.kind === 'ch340' ? 32 : 64;
    this.phase = 0.00037;
  }

  /** Time until the next USB frame starts [s]. */
  private toNextFrame(): number {
    const t = this.clock.now() - this.phase;
    return FRAME_S - (((t % FRAME_S) + FRAME_S) % FRAME_S);
  }

  /** Bytes that left the board's UART. */
  up(bytes: Buffer): void {
    if (this.o.kind === 'none') {
      this.onUp(bytes);
      return;
    }
    this.upBuf.push(bytes);
    this.upBytes += bytes.length;
    if (this.upBytes >= this.packet) {
      // A full packet goes at the next frame without waiting for the timer.
      this.flushUpAt(this.toNextFrame());
    } else if (!this.upTimer) {
      this.upTimer = this.clock.setTimer(this.flushS, () => this.flushUpAt(this.toNextFrame()));
    }
  }

  private flushUpAt(delay: number): void {
    this.clock.clearTimer(this.upTimer);
    this.upTimer = this.clock.setTimer(delay, () => {
      this.upTimer = undefined;
      if (this.upBytes === 0) return;
      const b = Buffer.concat(this.upBuf, this.upBytes);
      this.upBuf = [];
      this.upBytes = 0;
      this.onUp(b);
    });
  }

  /** Bytes the host wrote. */
  down(bytes: Uint8Array): void {
    if (this.o.kind === 'none') {
      this.onDown(bytes);
      return;
    }
    this.downBuf.push(bytes);
    if (!this.downTimer) {
      this.downTimer = this.clock.setTimer(this.toNextFrame(), () => {
        this.downTimer = undefined;
        const all = this.downBuf;
        this.downBuf = [];
        for (const b of all) this.onDown(b);
      });
    }
  }

  dispose(): void {
    this.clock.clearTimer(this.upTimer);
    this.clock.clearTimer(this.downTimer);
  }
}
