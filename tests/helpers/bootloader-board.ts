// A board that has just been reset by its port's open (an Uno-class board: transport/dtr.ts): for
// `bootS` seconds its bootloader has the UART, so what the host sends goes nowhere and nothing comes
// back; then the sketch starts, sends its banner (`I 0 - ...`) and answers as the mock rig's board.
import type { Rig } from '../../src/config/load.js';
import type { MockEnd } from '../../src/mock/binding.js';
import { buildLineMock, type LineMockParts } from '../../src/mock/line-mock.js';
import type { Clock } from '../../src/time/clock.js';

export class BootloaderBoard implements MockEnd {
  onTransmit: (bytes: Buffer) => void = () => {};
  hostBaudRate: number | undefined;
  /** Bytes the bootloader swallowed. */
  swallowed = 0;
  private parts: LineMockParts | undefined;

  constructor(rig: Rig, clock: Clock, bootS: number) {
    clock.setTimer(bootS, () => {
      const parts = buildLineMock(rig, clock);
      parts.end.hostBaudRate = this.hostBaudRate;
      parts.end.onTransmit = (b) => this.onTransmit(b);
      this.parts = parts;
    });
  }

  /** Whether the sketch runs (the bootloader is done). */
  get booted(): boolean {
    return this.parts !== undefined;
  }

  receive(bytes: Uint8Array): void {
    if (this.parts) this.parts.end.receive(bytes);
    else this.swallowed += bytes.length;
  }

  dispose(): void {
    this.parts?.dispose();
  }
}
