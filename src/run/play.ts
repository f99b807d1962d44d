/**
 * The gearbox's play, measured with a link-side sensor (issue 33): a potentiometer on the joint, after
 * the gearbox (`firmata.linkSensors`), read in the same sample as the motor-side encoder. While the
 * motor pushes one way the gear rests on one flank and the motor leads the link by half the play (plus
 * the gear's elastic wind-up); pushed the other way it lags by as much. The play is the mean of
 * (motor-side - link-side) angle while the commanded torque held one sign, minus its mean while it
 * held the other. Samples count once the sign has held `holdS`, so that the motor has crossed the
 * play. The torque's sign, not the motion's: under gravity a joint moving down is still held up, and
 * the gear stays on the same flank.
 *
 * Pure: rows in, figures out; no clock.
 */
import { F, ROW_JOINTS } from '../telemetry/tick.js';

const DEG = 180 / Math.PI;

/** RunSummary.measuredPlay. */
export interface MeasuredPlay {
  /** Per joint [deg]; null without a link-side sensor, or when the torque never held each sign long enough. */
  playDeg: (number | null)[];
  /** Per joint, the samples counted with the torque positive and negative. */
  samples: [number, number][];
}

/** Samples needed on each side for a figure. */
const MIN_SAMPLES = 20;

export class PlayMeter {
  private readonly sum: [number, number][] = [];
  private readonly n: [number, number][] = [];
  private readonly sign: number[] = [];
  private readonly since: number[] = [];
  private known = 0;

  constructor(
    readonly joints: number,
    /** How long the torque's sign must have held before a sample counts [s]. */
    readonly holdS = 0.1,
  ) {
    for (let j = 0; j < joints; j++) {
      this.sum.push([0, 0]);
      this.n.push([0, 0]);
      this.sign.push(0);
      this.since.push(0);
    }
  }

  /** A row of a run's recording (a fresh sample with the motors driven: the caller says `driving`). */
  add(r: ArrayLike<number>, driving: boolean): void {
    const mask = r[F.linkKnown]!;
    if (mask === 0 || r[F.fresh] !== 1) return;
    this.known |= mask;
    const t = r[F.boardT]!;
    for (let j = 0; j < Math.min(this.joints, ROW_JOINTS); j++) {
      if (!(mask & (1 << j))) continue;
      const tau = r[F.tauCmd0 + j]!;
      const s = driving ? Math.sign(tau) : 0;
      if (s !== this.sign[j]) {
        this.sign[j] = s;
        this.since[j] = t;
        continue;
      }
      if (s === 0 || t - this.since[j]! < this.holdS) continue;
      const d = (r[F.q0 + j]! - r[F.qLink0 + j]!) * DEG;
      const k = s > 0 ? 0 : 1;
      this.sum[j]![k] += d;
      this.n[j]![k]++;
    }
  }

  /** The figures, or undefined when no row had a link-side sensor. */
  figures(): MeasuredPlay | undefined {
    if (this.known === 0) return undefined;
    const playDeg = this.n.map(([np, nn], j) => {
      if (!(this.known & (1 << j)) || np < MIN_SAMPLES || nn < MIN_SAMPLES) return null;
      const [sp, sn] = this.sum[j]!;
      return Math.round((sp / np - sn / nn) * 1000) / 1000;
    });
    return { playDeg, samples: this.n.map(([a, b]) => [a, b]) };
  }
}
