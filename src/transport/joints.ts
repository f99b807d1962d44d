/**
 * Joint space, once: a board speaks in its own terms (encoder counts per input, duties per motor
 * output, in the order of its pins); the loop speaks in joints (angles [rad] from the horizontal and
 * relative to link 1, duties per joint). This is the one place where the two meet, for every
 * transport (the line protocol's LineLink, the Firmata link: both hand their raw board-order values
 * here and write the duties this gives them):
 * - units: counts -> angle with the joint's encoder (`countsPerRev`, `sign`, `zero`), or a Firmata
 *   potentiometer's analog value -> angle with its calibration;
 * - wiring: the rig file's `wiring` section (config/wiring.ts, written by `twolink setup`): joint j is
 *   read by board input `encoderInput[j]` and driven by board output `motorOutput[j]` with
 *   `motorSign[j]`; the board's firmware reports `boardCountsPerRev[j]` on that input. Without the
 *   section, input j and output j are joint j.
 * An arm wired otherwise than the wiring table of docs/first-arm.md then runs as it is.
 *
 * It also keeps what the board applied: each command written, in joint order, with the board time
 * where it is expected to apply (`sent`); a sample's `ack` then names the duty in force
 * (`duty`), and the commands written after it are the ones still on their way (`changesAfter`,
 * the prediction's schedule). The link that owns the JointSpace reports both (link.ts).
 */
import type { EncoderParams } from '../config/load.js';
import type { HostWiring } from '../config/wiring.js';

/** Angle [rad] of a joint whose encoder `e` reads `counts`. */
export function countsToAngle(e: EncoderParams, counts: number): number {
  return e.zero + (e.sign * counts * 2 * Math.PI) / e.countsPerRev;
}

/** A potentiometer's calibration (a Firmata rig's `firmata.sensors[]`): the raw analog value at two known angles [deg]. */
export interface PotentiometerUnits {
  rawAtMin: number;
  rawAtMax: number;
  minDeg: number;
  maxDeg: number;
}

/** How a joint's raw value becomes its angle: its encoder (counts), or a potentiometer (an analog value, Firmata). */
export type JointUnits = EncoderParams | PotentiometerUnits;

/** Angle [rad] of a joint whose sensor, in units `u`, reads `raw`. */
export function rawToAngle(u: JointUnits, raw: number): number {
  if ('countsPerRev' in u) return countsToAngle(u, raw);
  const deg = u.minDeg + ((raw - u.rawAtMin) / (u.rawAtMax - u.rawAtMin)) * (u.maxDeg - u.minDeg);
  return (deg * Math.PI) / 180;
}

/** A command that changes the duty `afterS` [s] into a horizon. */
export interface DutyChange {
  afterS: number;
  duty: readonly number[];
}

/**
 * The commands written to the board and where each is expected to apply (board time [s]), by
 * sequence number; `changesAfter` lists those sent after the one a sample acknowledges that apply
 * within a horizon, without allocating (the loop asks every sample).
 */
export class SentDuties {
  private readonly ring: { seq: number; applyAt: number; duty: number[] }[];
  private newest = -1;
  private readonly out: DutyChange[] = [];
  /** The duty before any command, and for an unknown one. */
  readonly zero: readonly number[];

  constructor(
    joints: number,
    private readonly size = 256,
  ) {
    this.ring = Array.from({ length: size }, () => ({ seq: -1, applyAt: 0, duty: new Array<number>(joints).fill(0) }));
    this.zero = new Array<number>(joints).fill(0);
  }

  /** Command `seq` with `duty` (per joint), expected to apply at board time `applyAt` [s] (NaN: not known, never in a horizon). */
  sent(seq: number, duty: readonly number[], applyAt: number): void {
    const e = this.ring[seq % this.size]!;
    e.seq = seq;
    e.applyAt = applyAt;
    for (let i = 0; i < e.duty.length; i++) e.duty[i] = duty[i]!;
    this.newest = seq;
  }

  /** Duty in force after command `seq` (zero duty if unknown). */
  duty(seq: number | null): readonly number[] {
    if (seq === null) return this.zero;
    const e = this.ring[seq % this.size]!;
    return e.seq === seq ? e.duty : this.zero;
  }

  /**
   * The commands sent after `ack` (the newest the board had applied at the sample taken at board time
   * `t` [s]) that apply before `t + horizon`, oldest first, as offsets from `t`. At most 32.
   */
  changesAfter(ack: number | null, t: number, horizon: number): readonly DutyChange[] {
    this.out.length = 0;
    if (this.newest < 0) return this.out;
    const from = ack === null ? this.newest - 32 : ack;
    const n = Math.min(32, (((this.newest - from) % 65536) + 65536) % 65536);
    for (let j = n - 1; j >= 0; j--) {
      const seq = (((this.newest - j) % 65536) + 65536) % 65536;
      const e = this.ring[seq % this.size]!;
      if (e.seq !== seq) continue;
      const after = e.applyAt - t;
      if (after > 0 && after < horizon) this.out.push({ afterS: after, duty: e.duty });
    }
    return this.out;
  }
}

// One or two joints: the per-joint arrays (units, the wiring's, duties) have `joints` entries, and the
// wiring's board indices are checked against them when the rig file is read (config/wiring.ts).
export class JointSpace {
  readonly joints: number;
  /** Per board input: the counts per revolution its firmware should report (0 for a potentiometer). */
  readonly boardCountsPerRev: readonly number[];
  private readonly w: HostWiring | undefined;
  private readonly out: number[];
  /** The commands written, per joint, and which the board applied. */
  readonly duties: SentDuties;

  constructor(
    /** Per joint, how its raw value becomes an angle: the rig file's encoders (or a Firmata potentiometer's calibration). */
    private readonly units: readonly JointUnits[],
    /** The rig file's wiring section, resolved (none: input j and output j are joint j). */
    wiring?: HostWiring,
  ) {
    this.joints = units.length;
    this.w = wiring;
    this.out = new Array<number>(this.joints).fill(0);
    this.duties = new SentDuties(this.joints);
    const cpr = units.map((u) => ('countsPerRev' in u ? u.countsPerRev : 0));
    if (wiring) wiring.encoderInput.forEach((input, j) => (cpr[input] = wiring.boardCountsPerRev[j]!));
    this.boardCountsPerRev = cpr;
  }

  /** The board's inputs' raw values (counts) as joints: raw values and angles [rad], each in joint order. */
  fromBoard(counts: readonly number[]): { q: number[]; raw: number[] } {
    const n = this.joints;
    const q = new Array<number>(n);
    const raw = new Array<number>(n);
    for (let j = 0; j < n; j++) {
      const c = this.w ? counts[this.w.encoderInput[j]!]! : counts[j]!;
      raw[j] = c;
      q[j] = rawToAngle(this.units[j]!, c);
    }
    return { q, raw };
  }

  /** Joint duties as the board's outputs (a buffer reused from call to call; the duties themselves without wiring). */
  toBoard(duty: readonly number[]): readonly number[] {
    const w = this.w;
    if (!w) return duty;
    for (let j = 0; j < this.joints; j++) this.out[w.motorOutput[j]!] = w.motorSign[j]! * duty[j]!;
    return this.out;
  }

  /** Something the board gives per input, in joint order. */
  toJoints<T>(board: readonly T[]): T[] {
    const w = this.w;
    return w ? w.encoderInput.map((input) => board[input]!) : board.slice();
  }

  /** A mask of joints (bit j: joint j) as a mask of the board's inputs. */
  boardMask(mask: number): number {
    const w = this.w;
    if (!w) return mask;
    let m = 0;
    for (let j = 0; j < this.joints; j++) if (mask & (1 << j)) m |= 1 << w.encoderInput[j]!;
    return m;
  }
}
