/**
 * The motors of the Firmata link: johnny-five `Motor`s driven from duties, sending only what changed,
 * and the bookkeeping the link needs: when each command reaches the board (for `Reading.ack`), when the
 * last one was written (the stall guard), and what the PWM pins should read back.
 */
import { motorPinList, type Wiring } from '../protocol/firmata-wiring.js';
import type { Clock } from '../time/clock.js';
import type { Transport } from './firmata-io.js';
import { johnnyFive, type FiveBoard, type FiveMotor } from './johnny-five.js';
import type { LinkCounters } from './link.js';

/** A johnny-five `Motor` per joint on the board's pins (threshold 0: every duty is sent as it is). */
export function fiveMotors(board: FiveBoard, w: Wiring): FiveMotor[] {
  const five = johnnyFive();
  return w.motors.map((m) => {
    const pins: Record<string, number> = {};
    for (const { role, pin } of motorPinList(m)) pins[role] = pin;
    return new five.Motor({ board, pins, threshold: 0, ...(m.invertPWM ? { invertPWM: true } : {}) });
  });
}

// One motor per joint (1 or 2): `five`, `lastSpeed` and `lastDir` have that many entries, indexed by joint.
export class FirmataMotors {
  /** Host time of the last writeDuty [s, link clock]. */
  lastCommandAt = -Infinity;
  private readonly lastSpeed: number[];
  private readonly lastDir: number[];
  private seq = 0;
  /** The last commands: id and when their bytes reach the board [s], oldest first. */
  private commands: { id: number; at: number }[] = [];

  constructor(
    readonly five: FiveMotor[],
    private readonly clock: Clock,
    private readonly transport: Transport,
  ) {
    this.lastSpeed = new Array<number>(five.length).fill(0);
    this.lastDir = new Array<number>(five.length).fill(1);
  }

  /** A motor is being driven at a speed other than 0. */
  get running(): boolean {
    return this.lastSpeed.some((s) => s !== 0);
  }

  /** A command id for a write that sent nothing (the link is not open). */
  skip(): number {
    const id = this.seq;
    this.seq = (this.seq + 1) % 65536;
    return id;
  }

  /** Duties (-1..1) to the motors (0 while disabled; non-finite ones counted and sent as 0); returns the command id. */
  write(duty: readonly number[], enabled: boolean, counters: LinkCounters): number {
    const id = this.skip();
    const now = this.clock.now();
    this.lastCommandAt = now;
    for (let j = 0; j < this.five.length; j++) {
      let d = duty[j] ?? 0;
      if (!Number.isFinite(d)) {
        counters.nonFinite++;
        d = 0;
      }
      this.drive(j, enabled ? d : 0);
    }
    // A command that changed nothing is in force as soon as the one before it.
    this.commands.push({ id, at: Math.max(now, this.transport.arrivesAt) });
    if (this.commands.length > 64) this.commands.shift();
    return id;
  }

  /** The newest command in force on the board at host time `t` [s], or null. */
  ackAt(t: number): number | null {
    for (let i = this.commands.length - 1; i >= 0; i--) if (this.commands[i]!.at <= t) return this.commands[i]!.id;
    return null;
  }

  /** One motor to a duty (-1..1): speed 0..255 and a direction; sends only what changed. */
  private drive(j: number, d: number): void {
    const motor = this.five[j]!;
    const speed = Math.round(Math.min(1, Math.abs(d)) * 255);
    const dir = speed === 0 ? this.lastDir[j]! : d > 0 ? 1 : 0;
    if (dir !== this.lastDir[j]) {
      // johnny-five's dir() sends PWM 0, then the direction pin(s), then the speed.
      if (dir === 1) motor.forward(speed);
      else motor.reverse(speed);
    } else if (speed !== this.lastSpeed[j]) {
      motor.speed(speed);
    }
    this.lastDir[j] = dir;
    this.lastSpeed[j] = speed;
  }

  /** Re-sends motor 1's speed (a message that changes nothing: it feeds the board's watchdog). */
  refresh(): void {
    this.five[0]?.speed(this.lastSpeed[0]);
  }

  /** Every motor to 0 now. */
  stopAll(): void {
    for (let j = 0; j < this.five.length; j++) {
      this.five[j]!.stop();
      this.lastSpeed[j] = 0;
    }
  }

  /** The board zeroed the pins itself (its watchdog): the next duty is sent in full. */
  forgetSpeeds(): void {
    this.lastSpeed.fill(0);
  }

  enableAll(on: boolean): void {
    for (const m of this.five) {
      if (on) m.enable();
      else m.disable();
    }
  }

  /** The PWM value a stopped motor's pin holds (an inverted-PWM shield going forward holds 255). */
  stoppedPwm(j: number): number {
    const m = this.five[j]!;
    return m.invertPWM && m.direction.value === 1 ? 255 : 0;
  }

  /** The PWM value motor j's pin should hold after the last command. */
  expectedPwm(j: number): number {
    const m = this.five[j]!;
    return m.invertPWM && m.direction.value === 1 ? this.lastSpeed[j]! ^ 0xff : this.lastSpeed[j]!;
  }
}
