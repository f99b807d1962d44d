/**
 * The USB-serial adapter between the laptop and the board's UART, as the mock rig models it. A pty
 * has none of this; a real cable does. The chips' figures, each with its public source, are in src/config/cable.ts.
 *
 * Up is board -> host, down is host -> board. Time comes from the board's clock. Every kind sends
 * what the host wrote at the next 1 ms full-speed USB frame (a bulk OUT packet), and the chip passes
 * it to the UART as it arrives: arduino-usbserial moves one byte per main-loop pass from the OUT
 * endpoint to the UART; FTDI and CH340 have no hold on that direction.
 */
import type { Clock, TimerHandle } from '../time/clock.js';
import { CH340, FTDI, U2, USB_FRAME_S, type AdapterKind } from '../config/cable.js';

export { ADAPTER_KINDS, adapterFlushS, adapterName, CH340, FTDI, NATIVE, U2, USB_FRAME_S, type AdapterKind } from '../config/cable.js';

export interface AdapterOptions {
  kind: AdapterKind;
  /** FTDI latency timer [ms]. @default 16 */
  latencyMs?: number;
}

export class UsbSerialAdapter {
  /** Bytes towards the host, when the adapter releases them. */
  onUp: (bytes: Buffer) => void = () => {};
  /** Bytes towards the board's UART. */
  onDown: (bytes: Uint8Array) => void = () => {};
  /** Bytes in the chip, not yet handed to USB. */
  private upBuf: Buffer[] = [];
  private upBytes = 0;
  private holdTimer: TimerHandle | undefined;
  /** Bytes handed to USB, waiting for the host's next poll (in the order they were handed over). */
  private usbQueue: Buffer[] = [];
  private usbTimer: TimerHandle | undefined;
  private downBuf: Uint8Array[] = [];
  private downTimer: TimerHandle | undefined;
  /** FTDI: when its latency timer last restarted (a packet went) [s]. */
  private lastSentAt: number;
  private readonly latencyS: number;
  /** Phase of the USB frames and of the 16U2's Timer0 against the board's clock [s] (fixed, arbitrary). */
  private readonly framePhase = 0.00037;
  private readonly timerPhase = 0.00113;

  constructor(
    private readonly clock: Clock,
    readonly o: AdapterOptions,
  ) {
    this.latencyS = (o.latencyMs ?? FTDI.defaultLatencyMs) / 1000;
    this.lastSentAt = clock.now();
  }

  /** Time until the next boundary of a grid of `period` [s] at `phase` (0 exactly on one: the next). */
  private toNext(period: number, phase: number): number {
    const t = this.clock.now() - phase;
    const into = ((t % period) + period) % period;
    return period - into;
  }

  /** Bytes that left the board's UART. */
  up(bytes: Buffer): void {
    const k = this.o.kind;
    if (k === 'none') {
      this.onUp(bytes);
      return;
    }
    if (k === 'native') {
      this.toUsb([bytes]);
      return;
    }
    this.upBuf.push(bytes);
    this.upBytes += bytes.length;
    if (k === '16u2') {
      // Flushed at the next Timer0 overflow, or at once past the nearly-full mark.
      if (this.upBytes > U2.nearlyFullBytes) this.release();
      else this.holdUntil(this.toNext(U2.flushS, this.timerPhase));
    } else if (k === 'ftdi') {
      if (this.upBytes >= FTDI.fullBytes) this.release();
      else this.holdUntil(this.ftdiTimerLeft());
    } else {
      // ch340 (estimate): a full packet goes at once, a short one after its hold.
      if (this.upBytes >= CH340.packetBytes) this.release();
      else this.holdUntil(CH340.holdS);
    }
  }

  /** FTDI: time until its latency timer expires; it restarts each period (status packets) [s]. */
  private ftdiTimerLeft(): number {
    const since = this.clock.now() - this.lastSentAt;
    const into = since % this.latencyS;
    return this.latencyS - into;
  }

  private holdUntil(delay: number): void {
    if (this.holdTimer) return;
    this.holdTimer = this.clock.setTimer(delay, () => {
      this.holdTimer = undefined;
      this.release();
    });
  }

  /** What the chip holds goes to its USB endpoint now. */
  private release(): void {
    this.clock.clearTimer(this.holdTimer);
    this.holdTimer = undefined;
    this.lastSentAt = this.clock.now();
    if (this.upBytes === 0) return;
    const all = this.upBuf;
    this.upBuf = [];
    this.upBytes = 0;
    this.toUsb(all);
  }

  /** Handed to USB: the host takes it at its next poll, on the next frame. */
  private toUsb(chunks: Buffer[]): void {
    this.usbQueue.push(...chunks);
    if (this.usbTimer) return;
    this.usbTimer = this.clock.setTimer(this.toNext(USB_FRAME_S, this.framePhase), () => {
      this.usbTimer = undefined;
      const q = this.usbQueue;
      this.usbQueue = [];
      if (q.length) this.onUp(Buffer.concat(q));
    });
  }

  /** Bytes the host wrote: they go at the next USB frame, in order. */
  down(bytes: Uint8Array): void {
    if (this.o.kind === 'none') {
      this.onDown(bytes);
      return;
    }
    this.downBuf.push(bytes);
    if (!this.downTimer) {
      this.downTimer = this.clock.setTimer(this.toNext(USB_FRAME_S, this.framePhase), () => {
        this.downTimer = undefined;
        const all = this.downBuf;
        this.downBuf = [];
        for (const b of all) this.onDown(b);
      });
    }
  }

  dispose(): void {
    this.clock.clearTimer(this.holdTimer);
    this.clock.clearTimer(this.usbTimer);
    this.clock.clearTimer(this.downTimer);
  }
}
