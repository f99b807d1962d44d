/**
 * Joint space, once: a board speaks in its own terms (encoder counts per input, duties per motor
 * output, in the order of its pins); the loop speaks in joints (angles [rad] from the horizontal and
 * relative to link 1, duties per joint). This is the one place where the two meet, for every
 * transport (the line protocol's LineLink, the Firmata link's encoders):
 * - units: counts -> angle with the joint's encoder (`countsPerRev`, `sign`, `zero`);
 * - wiring: the rig file's `wiring` section (config/wiring.ts, written by `twolink setup`): joint j is
 *   read by board input `encoderInput[j]` and driven by board output `motorOutput[j]` with
 *   `motorSign[j]`; the board's firmware reports `boardCountsPerRev[j]` on that input. Without the
 *   section, input j and output j are joint j.
 * An arm wired otherwise than the README's table then runs as it is.
 */
import type { EncoderParams } from '../config/load.js';
import type { HostWiring } from '../config/wiring.js';

/** Angle [rad] of a joint whose encoder `e` reads `counts`. */
export function countsToAngle(e: EncoderParams, counts: number): number {
  return e.zero + (e.sign * counts * 2 * Math.PI) / e.countsPerRev;
}

export class JointSpace {
  readonly joints: number;
  /** Per board input: the counts per revolution its firmware should report. */
  readonly boardCountsPerRev: readonly number[];
  private readonly w: HostWiring | undefined;
  private readonly out: number[];

  constructor(
    /** The rig file's encoders, per joint. */
    private readonly encoders: readonly EncoderParams[],
    /** The rig file's wiring section, resolved (none: input j and output j are joint j). */
    wiring?: HostWiring,
  ) {
    this.joints = encoders.length;
    this.w = wiring;
    this.out = new Array<number>(this.joints).fill(0);
    const cpr = encoders.map((e) => e.countsPerRev);
    if (wiring) wiring.encoderInput.forEach((input, j) => (cpr[input] = wiring.boardCountsPerRev[j]!));
    this.boardCountsPerRev = cpr;
  }

  /** The board's inputs' counts as joints: raw counts and angles [rad], each in joint order. */
  fromBoard(counts: readonly number[]): { q: number[]; raw: number[] } {
    const n = this.joints;
    const q = new Array<number>(n);
    const raw = new Array<number>(n);
    for (let j = 0; j < n; j++) {
      const c = this.w ? counts[this.w.encoderInput[j]!]! : counts[j]!;
      raw[j] = c;
      q[j] = countsToAngle(this.encoders[j]!, c);
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
