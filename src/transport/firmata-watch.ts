/**
 * What FirmataLink does about a board that may be gone or left unguarded: a probe that notices a port
 * that vanished (a write fails) or a board that went quiet, the feeding of the board's FirmataWatchdog
 * while the host answers, the host's own stall guard where the board has no watchdog, and the check
 * for a board that reset (firmata-link.ts).
 */
import { MODE } from '../protocol/firmata.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import type { Transport } from './firmata-io.js';
import type { FirmataMotors } from './firmata-motors.js';
import type { LinkCounters, LinkEvent } from './link.js';

/** What the watch needs of the link. */
export interface WatchedLink {
  /** Port path or label, for messages. */
  readonly name: string;
  readonly clock: Clock;
  readonly counters: LinkCounters;
  /** The rig's watchdog time [ms]. */
  readonly watchdogMs: number;
  /** Motor 1's PWM pin: its state query says the board answers, its mode (still PWM) that it was not reset. */
  readonly probePin: number;
  /** How long the board has to answer a query [ms]. */
  readonly answerMs: number;
  readonly transport: Transport;
  /** The link is configuring or open. */
  live: () => boolean;
  /** The link is open with its outputs enabled. */
  enabled: () => boolean;
  motors: () => FirmataMotors | undefined;
  /** The board runs twolink's FirmataWatchdog and it is armed. */
  hasBoardWatchdog: () => boolean;
  /** Asks the board for a pin's mode and state; undefined when no answer came within `ms`. */
  pinState: (pin: number, ms: number) => Promise<{ mode: number; state: number } | undefined>;
  say: (e: LinkEvent) => void;
}

export class FirmataWatch {
  /** Without a board watchdog: each time the link zeroed running motors after no command for longer than watchdogMs, how long [ms]. */
  readonly hostStops: number[] = [];
  private probeTimer: TimerHandle | undefined;
  private feedTimer: TimerHandle | undefined;
  private resetCheck: Promise<void> | undefined;

  constructor(private readonly l: WatchedLink) {}

  /** Ends the probe and the feeding (the link closed). */
  stop(): void {
    this.l.clock.clearTimer(this.probeTimer);
    this.l.clock.clearTimer(this.feedTimer);
  }

  /**
   * Stock Firmata has no watchdog: when the board has none and the motors are running on a command
   * older than watchdogMs (the host stalled), the link zeroes them the moment it runs again, before it
   * hands out the samples that piled up. The loop sees the same gap in board time and stops the run
   * with a stall fault that says how long the arm ran uncommanded; `hostStops` keeps the gaps [ms].
   */
  guardStall(now: number): void {
    const motors = this.l.motors();
    if (this.l.hasBoardWatchdog() || !this.l.enabled() || !motors?.running) return;
    const silentMs = (now - motors.lastCommandAt) * 1000;
    if (silentMs <= this.l.watchdogMs) return;
    motors.stopAll();
    this.hostStops.push(silentMs);
  }

  /**
   * A port that vanishes is not noticed until a write fails (serialport reads nothing, with no error,
   * from a hung-up tty). When the board has been quiet for a while the link writes a pin state query:
   * on a dead port the write fails and the stream closes; a live board that stays quiet is reported.
   */
  startProbe(samplingIntervalMs: number): void {
    const everyS = Math.max(0.1, (20 * samplingIntervalMs) / 1000);
    let heard = this.l.counters.bytesIn;
    let reported = false;
    const tick = (): void => {
      if (!this.l.live()) return;
      if (this.l.counters.bytesIn === heard) {
        void this.l.pinState(this.l.probePin, everyS * 1000).then((st) => {
          if (!st && !reported && this.l.live()) {
            reported = true;
            this.l.say({
              kind: 'error',
              message: `${this.l.name}: the board has sent nothing for ${Math.round(everyS * 2000)} ms and does not answer`,
            });
          }
        });
      } else {
        reported = false;
      }
      heard = this.l.counters.bytesIn;
      this.guardStall(this.l.clock.now());
      this.probeTimer = this.l.clock.setTimer(everyS, tick);
    };
    this.probeTimer = this.l.clock.setTimer(everyS, tick);
  }

  /**
   * The board's watchdog is fed by any message: when the duties do not change (nothing to send), the
   * link re-sends motor 1's speed every quarter of the watchdog time, but only while the loop is
   * answering (a command within that quarter), so that a host that stops answering trips it.
   */
  startFeeding(): void {
    const everyS = this.l.watchdogMs / 4000;
    const tick = (): void => {
      if (!this.l.live()) return;
      const m = this.l.motors()!;
      const now = this.l.clock.now();
      if (this.l.enabled() && m.running && now - this.l.transport.lastWriteAt >= everyS && now - m.lastCommandAt < everyS) m.refresh();
      this.feedTimer = this.l.clock.setTimer(everyS, tick);
    };
    this.feedTimer = this.l.clock.setTimer(everyS, tick);
  }

  /**
   * A REPORT_VERSION after open: a reset board forgets its pin modes, so ask the PWM pin's mode. One
   * question at a time: a stream of REPORT_VERSION bytes (noise, found by fuzzing) must not pile up.
   */
  checkReset(): void {
    if (this.resetCheck) return;
    this.resetCheck = this.l.pinState(this.l.probePin, this.l.answerMs).then((st) => {
      this.resetCheck = undefined;
      if (st && st.mode !== MODE.PWM && this.l.live()) this.l.say({ kind: 'board-reset' });
    });
  }
}
