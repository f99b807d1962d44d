/**
 * Turns the board's Firmata reports into Readings on the board's clock. One sampling pass of
 * ConfigurableFirmata sends an ANALOG_MESSAGE per reporting channel, then one ENCODER_DATA reply: a
 * sample is complete when every board input has a new value. Samples are timed by the report count
 * (src/transport/firmata-clock.ts), never by when they arrived. The raw values, in the order of the
 * board's inputs (`firmata.sensors[]`), go to the joint layer (transport/joints.ts) for units and
 * wiring, as the line protocol's counts do.
 */
import { decodeEncoderPositions, FIRMATA, wireTime, type FirmataMessage } from '../protocol/firmata.js';
import { potAngleRad, type JointSensor, type LinkSensorSpec } from '../protocol/firmata-wiring.js';
import type { EncoderParams } from '../config/load.js';
import type { HostWiring } from '../config/wiring.js';
import type { JointSpace, JointUnits } from './joints.js';
import { LinkError } from './link.js';
import { ReportClock } from './firmata-clock.js';
import type { Reading } from './link.js';

export interface SampleOptions {
  /** The board's inputs: `firmata.sensors[]`, resolved. */
  sensors: readonly JointSensor[];
  /** Per joint, a link-side potentiometer read beside its sensor (`firmata.linkSensors[]`): a sample waits for it too. */
  linkSensors?: readonly (LinkSensorSpec | null | undefined)[] | undefined;
  /** The joint layer: the inputs' raw values as joint angles. */
  space: JointSpace;
  baudRate: number;
  /** Board -> host bytes of one sampling pass (for the time on the wire). */
  upBytes: number;
}

/** What the rest of the link tells the assembler when a sample is made. */
export interface SampleContext {
  /** Host time of arrival [s]. */
  now: number;
  /** The motor outputs are enabled. */
  enabled: boolean;
  /** The newest command in force on the board at a host time [s], or null. */
  ack: (sampleTime: number) => number | null;
  /** The board's watchdog has cut the motors (and no command has come since). */
  watchdog: boolean;
}

export class SampleAssembler {
  /** Messages that did not decode (counted as corrupt). */
  corrupt = 0;
  /** Reports the clock recovery found missing. */
  lost = 0;
  /** Complete samples made. */
  count = 0;
  private clock: ReportClock;
  private readonly raw: number[];
  private pending = 0;
  private readonly full: number;
  /** The board input of an encoder number, of an analog channel. */
  private readonly inputOfEncoder = new Map<number, number>();
  private readonly inputOfChannel = new Map<number, number>();
  private chunk: number[][] = [];
  private readonly links: { joint: number; s: LinkSensorSpec }[];

  constructor(
    private readonly o: SampleOptions,
    periodS: number,
  ) {
    // The link-side sensors are inputs after the joints' own (input sensors.length + k).
    this.links = (o.linkSensors ?? []).flatMap((s, joint) => (s ? [{ joint, s }] : []));
    const inputs = o.sensors.length + this.links.length;
    this.raw = new Array<number>(inputs).fill(0);
    this.full = (1 << inputs) - 1;
    o.sensors.forEach((s, i) => {
      if (s.type === 'encoder') this.inputOfEncoder.set(s.encoder, i);
      else this.inputOfChannel.set(s.channel, i);
    });
    this.links.forEach(({ s }, k) => this.inputOfChannel.set(s.channel, o.sensors.length + k));
    this.clock = new ReportClock(periodS);
  }

  /** The clock recovery's period estimate [s]. */
  get period(): number {
    return this.clock.period;
  }

  /** Index of the newest sample (-1 before the first). */
  get index(): number {
    return this.clock.index;
  }

  /** Starts counting again (a new sampling interval): the next sample has index 0. */
  restart(periodS: number): void {
    this.clock = new ReportClock(periodS);
    this.pending = 0;
    this.chunk = [];
  }

  /** Forgets a half-complete sample (after an encoder reset). */
  dropPartial(): void {
    this.pending = 0;
  }

  /** The host time by which the sample after `index` is due [s]. */
  nextDue(index: number): number {
    return this.clock.line(index + 1);
  }

  /** A message of the current chunk; complete samples wait for `finish`. */
  take(m: FirmataMessage): void {
    if (m.kind === 'command' && m.cmd === FIRMATA.ANALOG_MESSAGE) {
      const i = this.inputOfChannel.get(m.channel);
      if (i !== undefined) this.set(i, (m.data[0] ?? 0) | ((m.data[1] ?? 0) << 7));
      return;
    }
    if (m.kind !== 'sysex' || m.cmd !== FIRMATA.ENCODER_DATA) return;
    const list = decodeEncoderPositions(m.body);
    if (!list) {
      this.corrupt++;
      return;
    }
    for (const { encoder, count } of list) {
      const i = this.inputOfEncoder.get(encoder);
      if (i !== undefined) this.set(i, count);
    }
  }

  private set(i: number, value: number): void {
    this.raw[i] = value;
    this.pending |= 1 << i;
    if (this.pending !== this.full) return;
    this.pending = 0;
    this.chunk.push(this.raw.slice());
  }

  /** Per joint, its link-side sensor's angle [rad] from a sample's raw values, null without one. */
  private linkAngles(raw: readonly number[]): (number | null)[] {
    const out = new Array<number | null>(this.o.sensors.length).fill(null);
    this.links.forEach(({ joint, s }, k) => {
      if (joint < out.length) out[joint] = potAngleRad(s, raw[this.o.sensors.length + k]!);
    });
    return out;
  }

  /** The chunk of bytes is done: its complete samples as Readings, oldest first (all but the last superseded). */
  finish(ctx: SampleContext): Reading[] {
    const k = this.chunk.length;
    if (k === 0) return [];
    const raws = this.chunk;
    this.chunk = [];
    const { first, lost } = this.clock.arrive(ctx.now, k);
    this.lost += lost;
    this.count += k;
    const up = wireTime(this.o.upBytes, this.o.baudRate);
    return raws.map((raw, i) => {
      const index = first + i;
      // The board took the sample one report's wire time before the report's earliest arrival.
      const sampleTime = Math.min(ctx.now, this.clock.line(index)) - up;
      return {
        ...this.o.space.fromBoard(raw),
        ...(this.links.length > 0 ? { qLink: this.linkAngles(raw) } : {}),
        boardTime: this.clock.boardTime(index),
        index,
        applyAt: 0, // set when handed out (it depends on when the answer is written)
        superseded: i < k - 1,
        hostTime: ctx.now,
        sampleTime,
        ack: ctx.ack(sampleTime),
        enabled: ctx.enabled,
        watchdog: ctx.watchdog,
        flags: 0,
      };
    });
  }
}

/**
 * Per joint, how its input's raw value becomes an angle (for the joint layer): joint j is read on
 * board input `wiring.encoderInput[j]` (input j without a wiring section); an encoder there counts
 * with the joint's `encoders[j]`, a potentiometer there reads with its own calibration
 * (`firmata.sensors[]`).
 */
export function jointUnits(
  name: string,
  sensors: readonly JointSensor[],
  encoders: readonly EncoderParams[],
  wiring: HostWiring | undefined,
): JointUnits[] {
  return sensors.map((_, j) => {
    const s = sensors[wiring?.encoderInput[j] ?? j]!;
    if (s.type !== 'encoder') return s;
    const e = encoders[j];
    if (!e)
      throw new LinkError(
        `${name}: joint ${j + 1} has an encoder but the rig file has no encoders[${j}] (counts per revolution)`,
        'config',
      );
    return e;
  });
}

/**
 * The analog channels to report: the joints' potentiometers (`firmata.sensors[]`), then the link-side
 * ones (`firmata.linkSensors[]`: a potentiometer on a joint, after the gearbox, beside its encoder),
 * checked against the channels the board reported.
 */
export function analogChannels(
  name: string,
  sensors: readonly JointSensor[],
  linkSensors: readonly (LinkSensorSpec | null | undefined)[] | undefined,
  boardChannels: number,
): number[] {
  const links = (linkSensors ?? []).flatMap((s, j) => {
    if (!s) return [];
    if (s.channel >= boardChannels)
      throw new LinkError(
        `${name}: firmata.linkSensors[${j}].channel: the board has analog inputs A0-A${boardChannels - 1} (got A${s.channel})`,
        'config',
      );
    return [s.channel];
  });
  return [...sensors.flatMap((s) => (s.type === 'potentiometer' ? [s.channel] : [])), ...links];
}
