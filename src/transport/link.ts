/**
 * The link to the arm: the one boundary between the control loop and the hardware. The line protocol
 * (LineLink, our firmware or the mock rig), the Firmata path (FirmataLink, stock firmware through
 * johnny-five) and anything else sit behind this interface; the loop cannot tell them apart.
 *
 * Rules of the boundary:
 * - `open()` connects and checks the board (the handshake); it rejects with a LinkError whose message
 *   names the port and the likely fix. Nothing moves before `enable(true)`.
 * - The board owns the sample clock. `startSampling(hz)` makes the board sample its encoders on its
 *   own timer, `hz` times a second; every sample that arrives is handed to the `onSample` listener,
 *   in order, none skipped (a sample lost on the wire shows as a gap in `Reading.index`). The loop
 *   answers a sample with `writeDuty()`; the board applies that command at a defined instant,
 *   `Reading.applyAt` (the line protocol: the board's next sample; Firmata: on arrival, estimated).
 * - `read()` and `writeDuty()` never throw and never block: `read()` returns the newest reading not
 *   returned before (or undefined), `writeDuty()` queues a command and returns at once. A non-finite
 *   duty is sent as 0 and counted.
 * - `stop()` zeroes the motors at once and resolves when the board has confirmed it (or says it
 *   could not). It is safe to call in any state, more than once.
 * - Faults the board or the port report arrive as events (`onEvent`); the loop decides what to do.
 * - The link keeps what the board applied (transport/joints.ts, the joint layer): `appliedDuty(ack)` is
 *   the duty per joint a sample's `ack` names, as written; `dutyChanges` the commands written after it
 *   and still on their way. The loop reads both here rather than keeping its own record.
 */
import type { DutyChange } from './joints.js';
import { cableLoss, type CableLoss } from './cable.js';

/** The one classification of a port's errors as a cable pulled, for the links (cable.ts). */
export { cableLoss, type CableLoss };

export type { DutyChange };

/**
 * The longest answer delay a link learns [samples], and the loop's longest prediction horizon: an
 * FTDI at its default 16 ms latency timer delays answers by 16-20 samples at 1 kHz. Here, beside the
 * Link contract, so that the loop need not import a concrete transport.
 */
export const MAX_DELAY_SAMPLES = 24;

/** What the board said about itself at connect. */
export interface BoardIdentity {
  /** Which transport this is. */
  transport: 'line' | 'firmata';
  /** Port path or label. */
  port: string;
  /** Firmware name and version. */
  firmware: string;
  /** Board type (uno, mega, mock, ...). */
  board: string;
  /** Protocol version (line protocol) or Firmata version. */
  protocol: string;
  joints: number;
  /** Counts per joint revolution the board reports (encoders), if it reports them. */
  countsPerRev?: number[];
  /** Board watchdog timeout [ms], if the board has one (absent: nothing on the board stops the motors if the host goes silent). */
  watchdogMs?: number;
  /** What works but is worse than it should be, to say loudly at start-up (e.g. stock Firmata: no watchdog). */
  warnings?: string[];
  /**
   * Milliseconds since the board booted (mod 2^32), as it said at the handshake (the line protocol's
   * `up=`). Absent: unknown (older firmware, Firmata), which a reconnect treats as a reset.
   */
  uptimeMs?: number;
}

/** One measurement from the board. */
export interface Reading {
  /** Joint angles [rad], converted with the rig's encoder (or sensor) parameters. */
  q: number[];
  /** The raw values: encoder counts, or analog readings. */
  raw: number[];
  /**
   * Per joint, the angle a link-side sensor read in the same sample [rad] (Firmata's
   * `firmata.linkSensors[j]`: a potentiometer on the joint, after the gearbox), null where the joint
   * has none; absent when no joint has one. A measurement, unlike the mock's `plant.q`.
   */
  qLink?: (number | null)[];
  /**
   * Board time of the sample [s]: the line protocol's 32-bit microseconds, unwrapped; on Firmata,
   * reconstructed from the report count and the board's sampling interval, locked to arrival times.
   * Never the host's arrival time: speeds are computed from this.
   */
  boardTime: number;
  /** Index of the sample on the board's grid since sampling started (a gap means lost samples). */
  index: number;
  /**
   * Board time [s] at which a command written now, in answer to this sample, takes effect: the
   * line protocol's board applies it at its next sample (boardTime + one period); Firmata applies it
   * on arrival (estimated from the link's latency). The controller predicts the arm's state there.
   */
  applyAt: number;
  /**
   * A newer sample had already arrived when this one was handed out (the host fell behind): record
   * it, but answer only the newest.
   */
  superseded: boolean;
  /** Host time when it arrived [s], on the link's clock. */
  hostTime: number;
  /**
   * Host time when the board took the measurement [s]: the arrival minus the frame's time on the wire
   * (and any other delay the transport knows of). The loop compares the measurement with the plan
   * at this time, not at the tick's.
   */
  sampleTime: number;
  /** Sequence number of the last motor command the board applied, or null. */
  ack: number | null;
  /** Motor outputs are enabled on the board. */
  enabled: boolean;
  /** The board's watchdog has cut the motors. */
  watchdog: boolean;
  /** Raw flag bits (line protocol), 0 otherwise. */
  flags: number;
}

/** Counters of the link, for the summary and the dashboard. */
export interface LinkCounters {
  /** Frames (or messages) sent. */
  sent: number;
  /** Valid frames received. */
  received: number;
  /** Frames the board sent that never arrived (gaps in its sequence numbers). */
  lost: number;
  /**
   * Frames the board itself dropped for want of transmit space (a gap followed by telemetry with the
   * TXDROP flag): not lost on the wire, but the host sent commands faster than the board could answer.
   */
  dropped: number;
  /** Lines rejected: bad checksum, framing, bad fields. */
  corrupt: number;
  /** Frames received twice. */
  duplicate: number;
  /** Frames received out of order. */
  reordered: number;
  /** Lines dropped for being too long. */
  overlong: number;
  /** Error frames from the board. */
  boardErrors: number;
  /** Duties that were not finite and were sent as 0. */
  nonFinite: number;
  /**
   * Samples answered too late: the board's next sample did not apply the answer (line protocol: the
   * next T's ack is older than the answer), or (Firmata) the answer was written after the next report
   * was due.
   */
  late: number;
  bytesIn: number;
  bytesOut: number;
}

export function zeroCounters(): LinkCounters {
  return {
    sent: 0,
    received: 0,
    lost: 0,
    dropped: 0,
    corrupt: 0,
    duplicate: 0,
    reordered: 0,
    overlong: 0,
    boardErrors: 0,
    nonFinite: 0,
    late: 0,
    bytesIn: 0,
    bytesOut: 0,
  };
}

/** Something the board or the port reported outside the request/answer flow. */
export type LinkEvent =
  /** The port closed; `cable`: it closed because its device vanished (a cable pulled: cable.ts), not by our close. */
  | { kind: 'closed'; reason: string; cable?: CableLoss }
  /** The handshake waits for something that takes time (a reset board's bootloader): one line for people, nothing wrong. */
  | { kind: 'waiting'; text: string }
  | { kind: 'board-reset' }
  | { kind: 'watchdog'; text: string }
  | { kind: 'board-error'; code: string; text: string; ack: number | null }
  | { kind: 'error'; message: string };

/**
 * How a stop ended: the board confirmed the zero command; or it did not and its watchdog will cut the
 * motors (`unconfirmed`); or it did not and the board has no watchdog (stock Firmata), so the motors may
 * still be running: "not confirmed: the board has no watchdog".
 */
export type StopOutcome = 'acknowledged' | 'unconfirmed' | 'unconfirmed-no-watchdog';

export interface Link {
  /** Port path or label, for messages. */
  readonly name: string;
  /** Connects and checks the board. Rejects with a LinkError. */
  open(): Promise<BoardIdentity>;
  /** The newest reading not returned before, or undefined. Never throws. */
  read(): Reading | undefined;
  /** Queues motor duties (-1..1 per joint, fraction of the supply); returns the command's id. Never throws. */
  writeDuty(duty: readonly number[]): number;
  /**
   * The duty per joint in force on the board after command `ack` (a Reading's `ack`): the command as
   * written (before the board's rounding). Zeros for null or a command the link no longer knows.
   */
  appliedDuty(ack: number | null): readonly number[];
  /**
   * The commands written after `ack` (the newest the board had applied at the sample taken at board
   * time `t` [s]) that apply before `t + horizon`, oldest first, as offsets [s] from `t` (the
   * prediction's schedule; a buffer reused from call to call). A command written outside a sample's
   * answer has no known instant and is never listed.
   */
  dutyChanges(ack: number | null, t: number, horizon: number): readonly DutyChange[];
  /** Enables or disables the motor outputs; resolves when the board confirmed. */
  enable(on: boolean): Promise<void>;
  /** Sets the encoder counts to zero (mask: bit 0 = joint 1). */
  zero(mask?: number): Promise<void>;
  /** Motors to zero now, outputs disabled; resolves with whether the board confirmed within `timeoutMs`. */
  stop(timeoutMs?: number): Promise<StopOutcome>;
  /**
   * Starts the board's sample clock: `hz` samples a second, each handed to the `onSample` listener.
   * Resolves when the board has confirmed. Sampling goes on, enabled or not, until close().
   */
  startSampling(hz: number): Promise<void>;
  /** Registers the listener for samples (one listener; a later call replaces it). */
  onSample(listener: (r: Reading) => void): void;
  /** The board's sampling period [s] once sampling has started, else undefined. */
  readonly samplePeriod: number | undefined;
  /** Closes the port (after stop()). */
  close(): Promise<void>;
  readonly counters: LinkCounters;
  /** Registers the listener for link events (one listener; a later call replaces it). */
  onEvent(listener: (e: LinkEvent) => void): void;
}

/** Why a link failed, as a closed set (a board's refusal carries its protocol error code). */
export type LinkErrorReason =
  | 'no-answer'
  | 'version'
  | 'mismatch'
  | 'busy'
  | 'not-found'
  | 'permission'
  | 'not-serial'
  | 'open'
  | 'closed'
  | 'closing'
  | 'config'
  | 'board-reset'
  | 'handshake'
  | 'no-data'
  | 'no-encoder'
  | 'timeout'
  | 'reach'
  | 'pins'
  | `board:${string}`;

/** A connection problem, with a message that names the port and says what to try. */
export class LinkError extends Error {
  override readonly name = 'LinkError';
  constructor(
    message: string,
    /** A short machine-readable reason. */
    readonly reason: LinkErrorReason,
  ) {
    super(message);
  }
}
