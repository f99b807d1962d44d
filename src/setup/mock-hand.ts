/**
 * The person's hand, for `twolink setup --mock`: it turns a joint of the simulated arm the way a
 * person would when setup asks (smoothly, over a second and a half, the other joint held where it
 * is), holds it there, and lets go; or turns a joint until it meets its mechanical stop and holds it
 * against it. It pushes the plant with a torque (a stiff PD on top of the
 * weight of the links it holds up); the board and the link only see what the encoders see.
 */
import { gravityTerms } from '../model/dynamics.js';
import { isTwoLink } from '../model/types.js';
import type { Plant } from '../mock/plant.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { Hand } from './driver.js';

/** A hand's stiffness [N m/rad] and damping [N m s/rad] per joint, and its update period [s]. */
const KP = [20, 5];
const KD = [1.5, 0.3];
const PERIOD_S = 0.001;
/** How long a move takes [s], and how long the hand holds the pose before setup reads it [s]. */
const MOVE_S = 1.5;
const HOLD_S = 0.5;
/**
 * Seeking a mechanical stop: the hand turns the joint at SEEK_DEG_S, its target never more than
 * LEAD_DEG ahead of the joint; the joint is against the stop when it has moved less than
 * STALL_DEG in STALL_S with the hand pushing. A hand gives up after MAX_TRAVEL_DEG (no stop there).
 */
const SEEK_DEG_S = 60;
const LEAD_DEG = 8;
const STALL_DEG = 0.3;
const STALL_S = 0.3;
const MAX_TRAVEL_DEG = 300;
const DEG = Math.PI / 180;

export class MockHand implements Hand {
  private timer: TimerHandle | undefined;
  private readonly target: number[];
  private readonly from: number[];
  private readonly to: number[];
  private t0 = 0;
  private moveS = MOVE_S;
  private seek: { joint: number; dir: 1 | -1; start: number; mark: { t: number; q: number }; done: () => void } | undefined;

  constructor(
    private readonly plant: Plant,
    private readonly clock: Clock,
  ) {
    this.target = plant.q.map(() => 0);
    this.from = plant.q.slice();
    this.to = plant.q.slice();
  }

  move(joint: number, deg: number): Promise<void> {
    this.seek = undefined;
    this.moveS = MOVE_S;
    this.plant.advance(this.clock.now());
    for (let j = 0; j < this.plant.joints; j++) {
      this.from[j] = this.plant.q[j]!;
      this.to[j] = this.plant.q[j]! + (j === joint ? (deg * Math.PI) / 180 : 0);
    }
    this.t0 = this.clock.now();
    this.clock.clearTimer(this.timer);
    this.tick();
    return new Promise((resolve) => this.clock.setTimer(MOVE_S + HOLD_S, resolve));
  }

  lower(): Promise<void> {
    this.seek = undefined;
    this.plant.advance(this.clock.now());
    let far = 0;
    for (let j = 0; j < this.plant.joints; j++) {
      this.from[j] = this.plant.q[j]!;
      this.to[j] = j === 0 ? -Math.PI / 2 : 0;
      far = Math.max(far, Math.abs(this.to[j]! - this.from[j]!));
    }
    // A person lowers an arm at about 90 deg/s.
    this.moveS = Math.max(MOVE_S, far / (90 * DEG));
    this.t0 = this.clock.now();
    this.clock.clearTimer(this.timer);
    this.tick();
    const moveS = this.moveS;
    return new Promise((resolve) => this.clock.setTimer(moveS + HOLD_S, resolve));
  }

  toStop(joint: number, direction: 1 | -1): Promise<void> {
    this.plant.advance(this.clock.now());
    for (let j = 0; j < this.plant.joints; j++) {
      this.from[j] = this.plant.q[j]!;
      this.to[j] = this.plant.q[j]!;
      this.target[j] = this.plant.q[j]!;
    }
    this.t0 = this.clock.now();
    this.clock.clearTimer(this.timer);
    return new Promise((resolve) => {
      const q = this.plant.q[joint]!;
      this.seek = { joint, dir: direction, start: q, mark: { t: this.clock.now(), q }, done: () => this.clock.setTimer(HOLD_S, resolve) };
      this.tick();
    });
  }

  release(): Promise<void> {
    this.seek = undefined;
    this.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.plant.advance(this.clock.now());
    this.plant.injected.extraTorque.fill(0);
    return Promise.resolve();
  }

  private tick(): void {
    const p = this.plant;
    p.advance(this.clock.now());
    const s = Math.min(1, (this.clock.now() - this.t0) / this.moveS);
    const blend = s * s * (3 - 2 * s);
    const arm = p.params.arm;
    const g = isTwoLink(arm) ? gravityTerms(arm, p.q) : [arm.m1 * arm.g * arm.d1 * Math.cos(p.q[0]!)];
    if (this.seek) this.seekStep();
    for (let j = 0; j < p.joints; j++) {
      if (!this.seek || j !== this.seek.joint) this.target[j] = this.from[j]! + blend * (this.to[j]! - this.from[j]!);
      p.injected.extraTorque[j] = g[j]! + KP[j]! * (this.target[j]! - p.q[j]!) - KD[j]! * p.qd[j]!;
    }
    this.timer = this.clock.setTimer(PERIOD_S, () => this.tick());
  }

  /** One step of seeking a stop: the target runs ahead of the joint; a stall against the stop (or a full travel) ends it. */
  private seekStep(): void {
    const s = this.seek!;
    const q = this.plant.q[s.joint]!;
    const now = this.clock.now();
    const ahead = s.dir * (this.target[s.joint]! - q);
    if (ahead < LEAD_DEG * DEG) this.target[s.joint]! += s.dir * SEEK_DEG_S * DEG * PERIOD_S;
    const travelled = Math.abs(q - s.start);
    if (now - s.mark.t >= STALL_S) {
      const stalled = Math.abs(q - s.mark.q) < STALL_DEG * DEG && ahead > LEAD_DEG * DEG * 0.5;
      s.mark = { t: now, q };
      if (stalled || travelled > MAX_TRAVEL_DEG * DEG) {
        const done = s.done;
        s.done = () => undefined;
        done();
      }
    }
  }
}
