/**
 * The line protocol's handshake, its two verdicts (line-link.ts runs it): why no board answered, and
 * whether the board that did answer is the one the rig file describes.
 */
import { PROTOCOL, type BoardInfo } from '../protocol/codec.js';
import { LinkError } from './link.js';

/** What came back while the host said hello. */
export interface HandshakeHeard {
  /** Bytes in [B]. */
  heard: number;
  /** Valid frames (of this session or an earlier one). */
  frames: number;
  /** Bytes of valid frames [B]. */
  validBytes: number;
}

/**
 * The error when no identity came: what came back says what to check. `bootMs` > 0: the handshake
 * waited that much longer for a bootloader (the open reset the board: dtr.ts), and the error says so.
 */
export function noHandshake(
  name: string,
  o: { handshakeMs: number; baudRate: number },
  bootMs: number,
  c: HandshakeHeard,
  lastError: string | undefined,
  tries: { waitedMs: number; hellos: number },
): LinkError {
  const hint =
    c.heard === 0
      ? 'nothing at all came back: is the board connected and powered, and is this its port?'
      : c.frames > 0 && c.heard - c.validBytes <= c.validBytes
        ? `it answered with frames but never with its identity${lastError ? ` (last error: ${lastError})` : ''}`
        : `${c.heard} bytes came back but no valid twolink frame: wrong baud rate, or a board without the twolink firmware (Firmata? set "link": {"transport": "firmata"} in the rig file)`;
  const within =
    bootMs > 0 ? `${o.handshakeMs} ms + ${bootMs} ms for the bootloader (opening the port reset the board)` : `${o.handshakeMs} ms`;
  return new LinkError(
    `${name}: no twolink handshake within ${within} at ${o.baudRate} baud: ${hint} (waited ${tries.waitedMs} ms, ${tries.hellos} hellos)`,
    'no-answer',
  );
}

/** Throws a LinkError when the board's identity does not fit the rig file: its protocol, its joints, its encoders' counts. */
export function checkBoardInfo(name: string, info: BoardInfo, joints: number, countsPerRev: readonly number[]): void {
  if (info.proto !== PROTOCOL) {
    throw new LinkError(
      `board on ${name} speaks twolink protocol ${info.proto}, this host speaks ${PROTOCOL}: flash firmware-protocol/firmware (see docs/first-arm.md) or update twolink`,
      'version',
    );
  }
  if (info.joints !== joints) {
    throw new LinkError(`board on ${name} has ${info.joints} joint(s), the rig file describes ${joints}`, 'mismatch');
  }
  for (let i = 0; i < joints; i++) {
    if (info.cpr[i] !== countsPerRev[i]) {
      throw new LinkError(
        `board on ${name} counts ${info.cpr[i]} per revolution on joint ${i + 1}, the rig file says ${countsPerRev[i]}: ` +
          'fix encoders[].countsPerRev in the rig file or CPR in the firmware config.h',
        'mismatch',
      );
    }
  }
}
