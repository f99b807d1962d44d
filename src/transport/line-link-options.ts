/** What a line-protocol link (line-link.ts) is opened with. */
import type { Duplex } from 'node:stream';
import type { EncoderParams } from '../config/load.js';
import type { HostWiring } from '../config/wiring.js';
import type { Clock } from '../time/clock.js';

export interface LineLinkOptions {
  /** The open serial stream (SerialPort, SerialPortStream). */
  stream: Duplex;
  /** Port path or label, for messages. */
  name: string;
  /** Baud rate, for messages. */
  baudRate: number;
  clock: Clock;
  /** The rig's encoders, per joint: counts -> angles, and checked against the board's cpr (joints.ts). */
  encoders: EncoderParams[];
  /** The rig file's wiring section, when the board is wired otherwise than input/output j = joint j (joints.ts). */
  wiring?: HostWiring;
  /** Board watchdog timeout to set [ms]. */
  watchdogMs: number;
  /** How long to wait for the handshake [ms]. */
  handshakeMs: number;
  /**
   * Opening the port reset the board (an Uno-class board whose DTR went up: transport/dtr.ts): when its
   * first hello goes unanswered, the handshake says it waits for the bootloader (a `waiting` event) and
   * waits this much longer [ms]. @default 0
   */
  bootloaderMs?: number;
  /** Time to wait for a command's answer [ms]. @default 500 */
  answerMs?: number;
}
