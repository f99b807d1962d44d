/**
 * Steps of FirmataLink's open, on the board johnny-five brought to `ready`: checking the board's pins
 * against the wiring, attaching the encoders (FirmataEncoder) and finding and arming twolink's
 * FirmataWatchdog, and the identity open returns. The steps that talk to the board wait for its answer
 * on the link's clock and say what happened when none comes.
 */
import {
  encodeWatchdogArm,
  ENCODER,
  FIRMATA,
  parseCapabilities,
  WATCHDOG,
  WATCHDOG_MAX_MS,
  type WatchdogStatus,
} from '../protocol/firmata.js';
import { checkWiring, type JointSensor, type Wiring, type WiringCheck } from '../protocol/firmata-wiring.js';
import type { EncoderParams } from '../config/load.js';
import type { Clock } from '../time/clock.js';
import { race, type Waiters } from './firmata-io.js';
import type { FirmataIO } from './johnny-five.js';
import { LinkError, type BoardIdentity } from './link.js';

/** What the steps need of the link. */
export interface SetupContext {
  /** Port path or label, for messages. */
  name: string;
  io: FirmataIO;
  clock: Clock;
  wiring: Wiring;
  /** Strings from the board. */
  strings: Waiters<string>;
  /** ENCODER_DATA replies from the board (their body length). */
  encoderReplies: Waiters<number>;
  /** The watchdog's status replies. */
  watchdogReplies: Waiters<WatchdogStatus>;
}

/**
 * The board's firmware, for messages, and its pins checked against the wiring (from the raw capability
 * response when it came: firmata.js drops the ENCODER mode); a LinkError naming what does not fit.
 */
export function checkBoard(
  name: string,
  io: FirmataIO,
  capabilityBody: number[] | undefined,
  w: Wiring,
): { fw: string; check: WiringCheck } {
  const fw = io.firmware?.name ? `${io.firmware.name} ${io.firmware.version?.major}.${io.firmware.version?.minor}` : 'unknown firmware';
  const caps = capabilityBody ? parseCapabilities(capabilityBody) : io.pins.map((p) => new Map(p.supportedModes.map((m) => [m, 1])));
  const check = checkWiring(caps, w, fw, io.analogPins.length);
  if (check.error) throw new LinkError(`${name}: ${check.error.message}`, check.error.reason);
  return { fw, check };
}

/** What open says of the board: its firmware and protocol, the joints, the encoders' resolution, the watchdog, the warnings. */
export function firmataIdentity(o: {
  port: string;
  firmware: string;
  board: string;
  io: FirmataIO;
  wiring: Wiring;
  encoders: readonly EncoderParams[];
  watchdog: WatchdogStatus | undefined;
  warnings: readonly string[];
}): BoardIdentity {
  const w = o.wiring;
  return {
    transport: 'firmata',
    port: o.port,
    firmware: o.firmware,
    board: o.board,
    protocol: `Firmata ${o.io.version.major}.${o.io.version.minor}`,
    joints: w.motors.length,
    ...(w.encoderJoints.length === w.motors.length
      ? { countsPerRev: o.encoders.slice(0, w.motors.length).map((e) => e.countsPerRev) }
      : {}),
    ...(o.watchdog ? { watchdogMs: o.watchdog.timeoutMs } : {}),
    ...(o.warnings.length > 0 ? { warnings: o.warnings.slice() } : {}),
  };
}

/** Resets the position of the encoders among `sensors` whose bit is set in `inputs` (the board's order); false when there was none. */
export function resetEncoders(io: FirmataIO, sensors: readonly JointSensor[], inputs: number): boolean {
  let any = false;
  sensors.forEach((s, i) => {
    if (s.type === 'encoder' && inputs & (1 << i)) {
      io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.RESET_POSITION, s.encoder]);
      any = true;
    }
  });
  return any;
}

const FLASH_HINT = 'flash ConfigurableFirmata 2.x with the FirmataEncoder feature (docs/firmata.md)';

/** Attaches tried before FirmataEncoder is blamed: a board or host too busy to answer within one answer time gets more. */
export const ATTACH_TRIES = 4;

/**
 * FirmataEncoder ignores an attach of a number already attached (a board not reset since the last
 * session answers nothing): detach every number first, then attach; the firmware answers each attach
 * with the position. A busy machine (a starved simulated board, a host that reads its port late) can
 * miss one answer time `ms`: the detach and attach are sent again, up to `tries` times, before the
 * sketch is blamed, and the error says how long that was. Auto-reporting is turned on.
 */
export async function attachEncoders(c: SetupContext, fw: string, ms: number, tries = ATTACH_TRIES): Promise<void> {
  const encs = c.wiring.sensors.filter((s): s is Extract<JointSensor, { type: 'encoder' }> => s.type === 'encoder');
  // "Unknown pin mode" (an encoder pin without an interrupt) is a warning, not a refusal: the
  // firmware attaches the encoder anyway and polls that pin.
  const refusal = c.strings.next((text) => text.startsWith('Unhandled sysex'));
  // Kept over the tries: a late answer to an earlier attach is an answer.
  const replies = encs.map(() => c.encoderReplies.next((len) => len > 0));
  const answered = Promise.all(replies.map((r) => r.promise)).then(() => 'ok' as const);
  const t0 = c.clock.now();
  // 'ok', 'timeout', or the board's refusal in its words.
  let outcome: string = 'timeout';
  let sent = 0;
  while (outcome === 'timeout' && sent < tries) {
    sent++;
    for (const s of encs) c.io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.DETACH, s.encoder]);
    for (const s of encs) c.io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.ATTACH, s.encoder, s.pinA, s.pinB]);
    outcome = await race(c.clock, answered, refusal.promise, ms);
  }
  refusal.cancel();
  for (const r of replies) r.cancel();
  const waitedMs = Math.round((c.clock.now() - t0) * 1000);
  if (outcome === 'timeout') {
    throw new LinkError(
      `${c.name}: ${fw} lists the ENCODER pin mode but sent no encoder position to ${sent} attaches over ${waitedMs} ms ` +
        '(each sent after a detach, so not an encoder left attached by an earlier session): its FirmataEncoder does not answer; ' +
        'check that the sketch registers it (firmataExt.addFeature(encoder)) and calls encoder.report() (docs/firmata.md)',
      'no-encoder',
    );
  }
  if (outcome !== 'ok')
    throw new LinkError(
      `${c.name}: the board answered "${outcome}" to the encoder attach: ${fw} has no FirmataEncoder: ${FLASH_HINT}`,
      'no-encoder',
    );
  c.io.sysexCommand([FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 1]);
}

/**
 * Asks for twolink's FirmataWatchdog and arms it with `watchdogMs` and the motors' PWM pins. Returns
 * what it is armed with, or the warning to say loudly at start-up when the board has none.
 */
export async function setUpWatchdog(
  c: SetupContext,
  watchdogMs: number,
  ms: number,
): Promise<{ status: WatchdogStatus; warning?: undefined } | { status?: undefined; warning: string }> {
  const none = (why: string): { warning: string } => ({
    warning:
      `NO BOARD WATCHDOG: ${why}. If twolink stops or the cable goes, stock Firmata keeps the motors at their last PWM; ` +
      `twolink zeroes them itself when it sees no command for ${watchdogMs} ms, but only while it runs. ` +
      'Add the FirmataWatchdog feature to the sketch (docs/firmata.md, firmware-protocol/firmata-watchdog/) and keep a hardware emergency stop.',
  });
  const query = c.watchdogReplies.next();
  const refusal = c.strings.next((t) => t.startsWith('Unhandled sysex'));
  c.io.sysexCommand([FIRMATA.WATCHDOG_DATA, WATCHDOG.QUERY]);
  const answer = await race(c.clock, query.promise, refusal.promise, ms);
  query.cancel();
  refusal.cancel();
  if (typeof answer !== 'object')
    return none(
      `the firmware has no FirmataWatchdog (it ${answer === 'timeout' ? 'did not answer' : `answered "${answer}"`} to the watchdog query)`,
    );
  if (c.wiring.motors.some((m) => m.invertPWM))
    return none('a motor shield with inverted PWM would run at full speed on a zeroed pin, so the FirmataWatchdog is not armed');
  const armMs = Math.min(WATCHDOG_MAX_MS, watchdogMs);
  const armed = c.watchdogReplies.next((s) => s.timeoutMs === armMs);
  c.io.sysexCommand([
    FIRMATA.WATCHDOG_DATA,
    ...encodeWatchdogArm(
      armMs,
      c.wiring.motors.map((m) => m.pwm),
    ),
  ]);
  const status = await race(c.clock, armed.promise, new Promise<never>(() => {}), ms);
  armed.cancel();
  if (status === 'timeout') return none(`the FirmataWatchdog answered the query but did not confirm being armed within ${ms} ms`);
  return { status };
}

/**
 * The messages that leave a board quiet whatever an earlier session (twolink killed, or another
 * program) left running: FirmataEncoder's auto-report off (`F0 61 04 00 F7`: FirmataEncoder.cpp's
 * handleSysex stores argv[1] of ENCODER_REPORT_AUTO as is, and report() sends nothing while it is 0),
 * and the reporting of every digital port (`D0|port 00`) and analog channel (`C0|channel 00`) off.
 * ConfigurableFirmata 2.10 ignores a port or channel the board does not have
 * (DigitalInputFirmata.cpp reportDigital: `port < TOTAL_PORTS`; AnalogInputFirmata.cpp reportAnalog:
 * `analogPin < TOTAL_ANALOG_PINS`). 69 bytes: 12 ms at 57600 baud.
 */
export function quietBoard(): Buffer {
  const bytes: number[] = [FIRMATA.START_SYSEX, FIRMATA.ENCODER_DATA, ENCODER.REPORT_AUTO, 0, FIRMATA.END_SYSEX];
  for (let i = 0; i < 16; i++) bytes.push(FIRMATA.REPORT_DIGITAL | i, 0, FIRMATA.REPORT_ANALOG | i, 0);
  return Buffer.from(bytes);
}
