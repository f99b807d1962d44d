/**
 * Injections: the test knobs that make the mock rig (or the host's own loop thread) misbehave at a
 * given time (`--inject NAME[=VALUE][@T]`, repeatable; in a HIL suite, `"injections"`), to see what
 * twolink does. Not to be confused with faults: a fault is a safety stop the loop declares
 * (`fault:watchdog`, `fault:link-lost`), often because of an injection.
 *
 * One table, INJECTIONS, as johnny-five's `Controllers`: per injection what it does (help, example),
 * what its value is (parse: unit, range, default) and what it does to the part it acts on (apply).
 * The CLI help, the HIL suite's check, the mock thread's messages and the firmware rig all read it.
 *
 * Every value is checked at parse time with its unit and range (injection-values.ts), so that what
 * runs later only ever sees valid values: `payload=-5`, `drop=NaN` or `busy=1e9` (a loop thread
 * blocked for 30 years) are refused with one line naming the argument, the value and what is allowed.
 */
import { z } from 'zod';
import type { FirmataBoard } from './firmata-board.js';
import type { LineBoard } from './line-board.js';
import type { Plant } from './plant.js';
import type { Clock, TimerHandle } from '../time/clock.js';
import { handPath } from './hand.js';
import {
  type ValueParser,
  type Quantity,
  checkQuantity,
  none,
  quantity,
  joint,
  jointAnd,
  handArg,
  probability,
  byteCount,
  endpointForce,
  bridgePreset,
} from './injection-values.js';
import { isTwoLink } from '../model/types.js';
import { DRIVER_PRESETS, type DriverParams } from '../model/driver.js';

/** The parts of a rig (and of the host) that injections act on. A mock offers those it has. */
export interface InjectionParts {
  /** The simulated arm, its motors and their supply. */
  arm: Plant;
  /** The simulated encoders, as the board reads them. */
  encoders: Plant;
  /** The bytes on the line protocol's wire, both ways (the line-protocol mock board). */
  wire: Pick<LineBoard, 'injected' | 'injectRaw'>;
  /** The board's UART: it can stop sending (a hung firmware, a cut TX line). */
  uart: { silence(): void };
  /** The board, which can be reset. */
  board: { reset(): void };
  /** The USB cable, which can be pulled. */
  cable: { unplug(): void };
  /** The host's loop thread. */
  host: {
    /** Blocks the thread for this long [s] (a busy machine). */
    block(seconds: number): void;
    /** Throws an exception on the thread. */
    raise(message: string): void;
  };
}

export type InjectionPart = keyof InjectionParts;

/** The parts for messages: `drop acts on <this>`. */
const PART_NAMES: Record<InjectionPart, string> = {
  arm: 'the simulated arm',
  encoders: 'the simulated encoders',
  wire: "the line protocol's bytes",
  uart: "the board's UART",
  board: "the board's reset",
  cable: 'the USB cable',
  host: "the host's loop thread",
};

/** Where injections land: the parts on offer, and a name for messages ("the Firmata mock rig"). */
export type InjectionSite = Partial<InjectionParts> & { name: string };

/** One injection: what it does, its value, and what it does to the part it acts on. */
export interface InjectionDef<P extends InjectionPart = InjectionPart, T = unknown> {
  /** What it does, for people. */
  help: string;
  /** A valid argument, e.g. `payload=0.2@1.5`. */
  example: string;
  /** The part it acts on. */
  acts: P;
  parse: ValueParser<T>;
  /** It takes a duration, `@T+D` (an injection without one lasts to the end of the run). */
  lasts?: true;
  /** Does it, with a checked value (and its duration [s], when it takes one and one is given). */
  apply(part: InjectionParts[P], value: T, durationS?: number): void;
}

/** An entry of the table, type-checked: `apply` gets the part `acts` names and the value `parse` gives. */
const def = <P extends InjectionPart, T>(d: InjectionDef<P, T>): InjectionDef<P, T> => d;

/** Deterministic noise bytes (the same every run). */
function noise(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 2654435761) >>> 24;
  return b;
}

/** One figure of a joint's H-bridge, as the plant has it now, set to `amount`. */
type BridgeField = 'dropV' | 'seriesOhm' | 'deadTimeUs' | 'pwmHz' | 'pwmBits';

/** A knob that sets one number of a joint's H-bridge (`NAME=JOINT:VALUE`); the example shows `example` (default: the default). */
function bridgeKnob(
  field: BridgeField,
  help: string,
  label: string,
  q: Quantity,
  dflt: number,
  example = dflt,
): InjectionDef<'arm', { joint: number; amount: number }> {
  const name = { dropV: 'bridgedrop', seriesOhm: 'bridgeohm', deadTimeUs: 'deadtime', pwmHz: 'pwmhz', pwmBits: 'pwmbits' }[field];
  return def({
    help,
    example: `${name}=1:${example}@0`,
    acts: 'arm',
    parse: jointAnd(label, q, dflt),
    apply: (p, v) => setBridge(p, v.joint, field, v.amount),
  });
}

function setBridge(p: Plant, joint: number, field: BridgeField, amount: number): void {
  const d: DriverParams = p.driverOf(joint);
  d[field] = amount;
  delete d.preset;
  p.setDriver(joint, d);
}

const DEG = Math.PI / 180;

/** Every injection: the one table. */
export const INJECTIONS = {
  payload: def({
    help: 'a mass at the endpoint',
    example: 'payload=0.2@1.5',
    acts: 'arm',
    parse: quantity('KG', { what: 'the payload', unit: 'kg', min: 0, max: 20 }, 0.2),
    apply: (p, kg) => p.setPayload(kg),
  }),
  stall: def({
    help: 'the joint jams',
    example: 'stall=2@1',
    acts: 'arm',
    parse: joint,
    apply: (p, j) => void (p.injected.stalled[j] = true),
  }),
  slip: def({
    help: "the joint's encoder slips once by a number of counts (at once: a jump)",
    example: 'slip=1:200@1',
    acts: 'encoders',
    parse: jointAnd('COUNTS', { what: 'the slip', unit: 'counts', min: -1_000_000, max: 1_000_000, integer: true }, 100),
    apply: (p, v) => void (p.injected.encoderOffset[v.joint]! += v.amount),
  }),
  slipping: def({
    help: "the joint's encoder slips on its shaft as the joint turns (a loose coupling or set screw): it sticks, then jerks back against the motion by COUNTS each time the joint has turned ten times as many, losing a tenth of the motion",
    example: 'slipping=1:20@1',
    acts: 'encoders',
    parse: jointAnd('COUNTS', { what: 'the slip', unit: 'counts', min: 1, max: 1_000_000, integer: true }, 20),
    apply: (p, v) => void (p.injected.encoderSlip[v.joint] = v.amount),
  }),
  reverse: def({
    help: "the joint's encoder counts backwards",
    example: 'reverse=1@1',
    acts: 'encoders',
    parse: joint,
    apply: (p, j) => void (p.injected.encoderReversed[j] = true),
  }),
  dead: def({
    help: "the joint's motor gives no torque",
    example: 'dead=1@1',
    acts: 'arm',
    parse: joint,
    apply: (p, j) => void (p.injected.motorDead[j] = true),
  }),
  sag: def({
    help: 'the supply drops to a fraction of nominal',
    example: 'sag=0.6@1',
    acts: 'arm',
    parse: quantity('FRACTION', { what: 'the supply fraction', unit: '', min: 0, max: 1 }, 0.6),
    apply: (p, f) => void (p.injected.supplyScale = f),
  }),
  push: def({
    help: 'an external torque on the joint (someone pushes the arm)',
    example: 'push=1:2@1',
    acts: 'arm',
    parse: jointAnd('NM', { what: 'the torque', unit: 'N m', min: -100, max: 100 }, 1),
    apply: (p, v) => void (p.injected.extraTorque[v.joint] = v.amount),
  }),
  force: def({
    help: 'a force on the endpoint for D seconds from T (a hand pushes the arm: tau = J^T F)',
    example: 'force=2,0@1+2',
    acts: 'arm',
    parse: endpointForce,
    lasts: true,
    apply: (p, f, durationS) => p.pushEndpoint(f[0], f[1], durationS ?? Infinity),
  }),
  hand: def({
    help: 'a scripted hand takes the endpoint, leads it along a path and lets go (float mode, twolink teach)',
    example: 'hand=circle@1',
    acts: 'arm',
    parse: handArg,
    apply: (p, name) => {
      if (isTwoLink(p.params.arm)) p.setHand(handPath(name, p.params.arm));
    },
  }),
  backlash: def({
    help: "play in the joint's gearbox, at the output (the encoder on the motor shaft does not see it)",
    example: 'backlash=1:1.5@0',
    acts: 'arm',
    parse: jointAnd('DEG', { what: 'the play', unit: 'deg', min: 0, max: 30 }, 1.5),
    apply: (p, v) => void (p.flaws.backlash[v.joint] = v.amount * DEG),
  }),
  gearstiffness: def({
    help: "stiffness of the joint's gear mesh once the play is taken up",
    example: 'gearstiffness=1:2000@0',
    acts: 'arm',
    parse: jointAnd('NM_PER_RAD', { what: 'the stiffness', unit: 'N m/rad', min: 1, max: 100_000 }, 5000),
    apply: (p, v) => void (p.flaws.gearStiffness[v.joint] = v.amount),
  }),
  breakaway: def({
    help: "the joint's breakaway (static) friction: the torque to start from rest (at or below its Coulomb friction: none)",
    example: 'breakaway=1:0.24@0',
    acts: 'arm',
    parse: jointAnd('NM', { what: 'the breakaway torque', unit: 'N m', min: 0, max: 100 }, 0.24),
    apply: (p, v) => void (p.flaws.breakaway[v.joint] = v.amount),
  }),
  stribeck: def({
    help: "the joint's Stribeck velocity: its friction falls from breakaway to Coulomb over about this speed",
    example: 'stribeck=1:0.02@0',
    acts: 'arm',
    parse: jointAnd('RAD_S', { what: 'the Stribeck velocity', unit: 'rad/s', min: 0.0001, max: 10 }, 0.02),
    apply: (p, v) => void (p.flaws.stribeckVelocity[v.joint] = v.amount),
  }),
  bridge: def({
    help: "the joint's H-bridge is a preset's (its drop, resistance, dead time, PWM: src/model/driver.ts)",
    example: 'bridge=1:l298n@0',
    acts: 'arm',
    parse: bridgePreset,
    apply: (p, v) => p.setDriver(v.joint, DRIVER_PRESETS[v.preset]),
  }),
  bridgedrop: bridgeKnob(
    'dropV',
    "the voltage the joint's H-bridge loses across its switches whatever the current",
    'V',
    { what: 'the drop', unit: 'V', min: 0, max: 20 },
    1.4,
  ),
  bridgeohm: bridgeKnob(
    'seriesOhm',
    "the resistance of the joint's H-bridge in series with the motor",
    'OHM',
    { what: 'the resistance', unit: 'ohm', min: 0, max: 100 },
    1.15,
  ),
  deadtime: bridgeKnob(
    'deadTimeUs',
    "the on-time the joint's H-bridge loses per PWM period",
    'US',
    { what: 'the dead time', unit: 'us', min: 0, max: 10_000 },
    40,
  ),
  pwmhz: bridgeKnob(
    'pwmHz',
    "the PWM frequency of the joint's H-bridge (with the dead time: the duty lost)",
    'HZ',
    { what: 'the PWM frequency', unit: 'Hz', min: 1, max: 1_000_000 },
    490,
    980,
  ),
  pwmbits: bridgeKnob(
    'pwmBits',
    "the PWM resolution of the joint's H-bridge (0: continuous)",
    'BITS',
    { what: 'the PWM resolution', unit: 'bits', min: 0, max: 16, integer: true },
    8,
  ),
  drop: def({
    help: 'each byte on the wire is lost with this probability',
    example: 'drop=0.01@0',
    acts: 'wire',
    parse: probability(0.01),
    apply: (w, pr) => void (w.injected.dropProbability = pr),
  }),
  corrupt: def({
    help: 'each byte on the wire gets a flipped bit with this probability',
    example: 'corrupt=0.01@0',
    acts: 'wire',
    parse: probability(0.01),
    apply: (w, pr) => void (w.injected.corruptProbability = pr),
  }),
  latency: def({
    help: "extra delay before the board's commands apply",
    example: 'latency=5@1',
    acts: 'wire',
    parse: quantity('MS', { what: 'the latency', unit: 'ms', min: 0, max: 1000 }, 5),
    apply: (w, ms) => void (w.injected.extraLatency = ms / 1000),
  }),
  silent: def({
    help: 'the board stops answering (hung firmware, a cable cut on the TX line)',
    example: 'silent@1',
    acts: 'uart',
    parse: none,
    apply: (u) => u.silence(),
  }),
  unplug: def({
    help: 'the USB cable is pulled: the port vanishes',
    example: 'unplug@1',
    acts: 'cable',
    parse: none,
    apply: (c) => c.unplug(),
  }),
  reset: def({ help: 'the board resets', example: 'reset@1', acts: 'board', parse: none, apply: (b) => b.reset() }),
  garbage: def({
    help: 'the board sends bytes of noise',
    example: 'garbage=5000@1',
    acts: 'wire',
    parse: byteCount('the byte count', 5000),
    apply: (w, n) => w.injectRaw(noise(n)),
  }),
  longline: def({
    help: 'the board sends a line without LF',
    example: 'longline=1000000@1',
    acts: 'wire',
    parse: byteCount('the line length', 1_000_000),
    apply: (w, n) => w.injectRaw(new Uint8Array(n).fill(0x54)),
  }),
  busy: def({
    help: 'the loop thread is blocked (a busy machine)',
    example: 'busy=1@1',
    acts: 'host',
    parse: quantity('S', { what: 'the time', unit: 's', min: 0, max: 30, above: true }, 1),
    apply: (h, s) => h.block(s),
  }),
  throw: def({
    help: 'an exception inside the loop thread',
    example: 'throw@1',
    acts: 'host',
    parse: none,
    apply: (h) => h.raise('injected exception (--inject throw)'),
  }),
};

export type InjectionName = keyof typeof INJECTIONS;

/** The table with its entries' types erased (for code that handles any entry). */
const TABLE: Record<InjectionName, InjectionDef> = INJECTIONS;

export const INJECTION_NAMES = Object.keys(INJECTIONS) as [InjectionName, ...InjectionName[]];

/** An injection scheduled at a loop time. */
export interface Injection {
  name: InjectionName;
  /** The value after '=', as written (checked by parseInjection; what it means is the entry's). */
  value?: string;
  /** Loop time at which it happens [s]. */
  at: number;
  /** How long it lasts [s] (`@T+D`; only the injections that take one). */
  for?: number;
}

/** An injection as it crosses a thread or a process boundary (JSON, worker messages): checked again. */
export const injectionSchema = z.strictObject({
  name: z.enum(INJECTION_NAMES),
  value: z.string().optional(),
  at: z.number().finite().min(0),
  for: z.number().finite().positive().optional(),
});

/** An --inject argument that cannot be used; the message starts with `--inject "TEXT":`. */
export class InjectionError extends Error {
  override readonly name = 'InjectionError';
}

/** Latest time an injection can be scheduled at [s] (a day). */
export const MAX_INJECTION_TIME_S = 86_400;

/** The part an injection acts on. */
export function actsOn(name: InjectionName): InjectionPart {
  return TABLE[name].acts;
}

/** One line per injection for a help text: name, what it does, its value, an example. */
export function injectionHelp(indent = '  '): string {
  return INJECTION_NAMES.map((n) => {
    const d = TABLE[n];
    return `${indent}${n.padEnd(9)} ${d.help}${d.parse.form ? `: ${n}${d.parse.form}` : ''}${d.lasts ? ', @T+D for D seconds' : ''}; acts on ${PART_NAMES[d.acts]}; e.g. ${d.example}`;
  }).join('\n');
}

/**
 * Parses `NAME[=VALUE][@T]` for an arm with `joints` joints; throws an InjectionError that starts with
 * `flag "TEXT":` and names the value, its unit and its range (or the list of injections).
 */
export function parseInjection(text: string, joints = 2, flag = '--inject'): Injection {
  const fail = (why: string): never => {
    throw new InjectionError(`${flag} "${text}": ${why}`);
  };
  const m = /^([a-z]+)(?:=([^@]*))?(?:@([^@+]*)(?:\+([^@]*))?)?$/.exec(text);
  if (!m) return fail('write NAME[=VALUE][@SECONDS] (and +DURATION for a force: force=2,0@1+2), e.g. payload=0.2@1.5');
  const name = m[1]!;
  if (!Object.hasOwn(INJECTIONS, name)) return fail(`unknown injection "${name}"; injections: ${INJECTION_NAMES.join(', ')}`);
  const d = TABLE[name as InjectionName];
  let at = 0;
  if (m[3] !== undefined) {
    const t = checkQuantity(m[3], { what: 'the time after @', unit: 's', min: 0, max: MAX_INJECTION_TIME_S });
    if (!t.ok) return fail(t.why);
    at = t.value;
  }
  let lasts: number | undefined;
  if (m[4] !== undefined) {
    if (!d.lasts)
      return fail(`${name} takes no duration (only ${INJECTION_NAMES.filter((k) => TABLE[k].lasts).join(', ')}: NAME=VALUE@T+D)`);
    const t = checkQuantity(m[4], { what: 'the duration after +', unit: 's', min: 0, max: MAX_INJECTION_TIME_S, above: true });
    if (!t.ok) return fail(t.why);
    lasts = t.value;
  }
  if (m[2] === '') return fail(`an empty value after "=" (${name} takes ${d.parse.form ? d.parse.form.slice(1) : 'no value'})`);
  const v = d.parse.check(m[2], joints, name);
  if (!v.ok) return fail(v.why);
  return {
    name: name as InjectionName,
    ...(m[2] !== undefined ? { value: m[2] } : {}),
    at,
    ...(lasts !== undefined ? { for: lasts } : {}),
  };
}

/** The argument back as text, `NAME[=VALUE]@T[+D]` (what parseInjection reads). */
export function formatInjection(i: Injection): string {
  return `${i.name}${i.value !== undefined ? `=${i.value}` : ''}@${i.at}${i.for !== undefined ? `+${i.for}` : ''}`;
}

/** Why a place with these parts (`where`: "the Firmata mock rig") cannot take this injection, or undefined if it can. */
export function refusalIn(parts: readonly InjectionPart[], where: string, name: InjectionName): string | undefined {
  const part = TABLE[name].acts;
  return parts.includes(part) ? undefined : `${name} acts on ${PART_NAMES[part]}, which ${where} does not have`;
}

/** Why `site` cannot take this injection, or undefined if it can. */
export function refusal(site: InjectionSite, name: InjectionName): string | undefined {
  return refusalIn(
    (Object.keys(site) as (InjectionPart | 'name')[]).filter((k): k is InjectionPart => k !== 'name' && site[k] !== undefined),
    site.name,
    name,
  );
}

/** What applying an injection came to: done, or why not (the site lacks the part it acts on). */
export type InjectionResult = { ok: true } | { ok: false; why: string };

/**
 * Applies an injection to the part of `site` it acts on. The value is checked again (it may come from
 * another thread or process); the host's `raise` throws, on purpose.
 */
export function applyInjection(site: InjectionSite, i: Injection): InjectionResult {
  const d = TABLE[i.name];
  const part = site[d.acts];
  if (part === undefined) return { ok: false, why: refusal(site, i.name)! };
  const v = d.parse.check(i.value, site.arm?.joints ?? site.encoders?.joints ?? 2, i.name);
  if (!v.ok) return { ok: false, why: `${formatInjection(i)}: ${v.why}` };
  d.apply(part, v.value, d.lasts ? i.for : undefined);
  return { ok: true };
}

/** The injections of a run, applied as the run's time reaches them; `pending` are those not yet due. */
export type InjectionSchedule = ((t: number) => void) & { readonly pending: Injection[] };

/**
 * The one scheduler of a run's injections (the threaded run's loop thread, the virtual run, the
 * firmware rig on the simulated board's time, the pty rig on its plant's time: injectOnPlantTime): due
 * on the loop's (the board's) time `t` [s], in the order of their times, each handed to `apply` once.
 */
export function injectionSchedule(injections: readonly Injection[], apply: (i: Injection, t: number) => void): InjectionSchedule {
  const pending = injections.slice().sort((a, b) => a.at - b.at);
  return Object.assign(
    (t: number): void => {
      while (pending.length && pending[0]!.at <= t) apply(pending.shift()!, t);
    },
    { pending },
  );
}

/**
 * The parts each mock rig offers (lineMockSite, firmataMockSite: tests/unit-injections.test.ts holds
 * them to it), to refuse an injection before a run rather than when it is due.
 */
export const MOCK_PARTS: Record<'line' | 'firmata', readonly InjectionPart[]> = {
  line: ['arm', 'encoders', 'wire', 'uart', 'board', 'cable'],
  firmata: ['arm', 'encoders', 'uart', 'board', 'cable'],
};

/** The line-protocol mock board's parts: all but the host's. */
export function lineMockSite(
  name: string,
  plant: Plant,
  board: Pick<LineBoard, 'injected' | 'injectRaw' | 'reset'>,
  unplug: () => void,
): InjectionSite {
  return {
    name,
    arm: plant,
    encoders: plant,
    wire: board,
    uart: { silence: () => void (board.injected.silent = true) },
    board,
    cable: { unplug },
  };
}

/** The Firmata mock board's parts: not the line protocol's bytes, nor the host's. */
export function firmataMockSite(
  name: string,
  plant: Plant,
  board: Pick<FirmataBoard, 'injected' | 'reset'>,
  unplug: () => void,
): InjectionSite {
  return { name, arm: plant, encoders: plant, uart: { silence: () => void (board.injected.silent = true) }, board, cable: { unplug } };
}

/** An injection counts as due this little before its time [s] (the plant's time is a sum of steps). */
const DUE_SLACK_S = 1e-9;

/** The injections of a mock rig on its plant's time (injectOnPlantTime). */
export interface ScheduledInjections {
  /** Those not applied yet. */
  readonly pending: readonly Injection[];
  /** Applies no more (the rig stops). */
  stop(): void;
}

/**
 * A mock rig's injections (those its site can take), applied with `injectionSchedule` on the time of
 * its simulated arm: `t` = the plant's time [s] minus `zero`, its time when the injections' clock
 * starts. What acts on the arm or its encoders is polled at each step of the plant (Plant.onStep), so
 * that `stall=2@1` jams the joint within one plant step of the arm's 1 s, however late the board's
 * timers ran (a starved thread: the board's time stands still, or catches up, but each step of the
 * arm still passes `at` once); the rest (the wire, the UART, the board's reset, the cable) are the
 * board's events, on a timer of the board's own `clock` (the plant's time is on it: createPlant
 * starts the plant at clock.now()). A timer at each due time also advances the plant to it, so that an
 * arm nobody reads (no host yet) still reaches its injections. `apply` gets the time (since `zero`) it was applied at.
 */
export function injectOnPlantTime(
  clock: Clock,
  plant: Plant,
  zero: number,
  injections: readonly Injection[],
  apply: (i: Injection, t: number) => void,
): ScheduledInjections {
  const onArm = (i: Injection): boolean => TABLE[i.name].acts === 'arm' || TABLE[i.name].acts === 'encoders';
  const applyAt = (i: Injection, t: number): void => apply(i, t - DUE_SLACK_S);
  const arm = injectionSchedule(injections.filter(onArm), applyAt);
  const board = injectionSchedule(
    injections.filter((i) => !onArm(i)),
    applyAt,
  );
  let timer: TimerHandle | undefined;
  let stopped = false;
  const arming = (): void => {
    clock.clearTimer(timer);
    timer = undefined;
    const next = Math.min(arm.pending[0]?.at ?? Infinity, board.pending[0]?.at ?? Infinity);
    if (stopped || next === Infinity) return;
    const due = zero + next;
    timer = clock.setTimer(due - clock.now(), () => {
      timer = undefined;
      // The board's time before the plant's catching up takes (wall) time. A real clock runs a timer
      // up to a millisecond early (RealClock): it is due now all the same.
      const now = Math.max(clock.now(), due);
      plant.advance(due); // (never backwards: a board that advanced it further already polled it)
      board(now - zero + DUE_SLACK_S);
      arming();
    });
  };
  plant.onStep = (t) => {
    if (arm.pending.length > 0) arm(t - zero + DUE_SLACK_S);
  };
  arming();
  return {
    get pending() {
      return [...arm.pending, ...board.pending].sort((a, b) => a.at - b.at);
    },
    stop: () => {
      stopped = true;
      clock.clearTimer(timer);
      plant.onStep = undefined;
    },
  };
}

/** Sets (undefined: clears) the one hook a mock board calls when it answers a host's handshake (LineBoard.onHandshake, FirmataBoard.onIdentify). */
export type HandshakeHook = (fn: (() => void) | undefined) => void;

/**
 * The pty rig's injections on its arm's time (injectOnPlantTime) counted from the host's handshake:
 * the first request for the board's identity it answers (`hook`), not from its serving, so that a host
 * that connects late (a busy machine held it) still meets each injection its time into its session.
 * None is applied before it (`pending` holds them all); `onZero` hears the moment, once.
 */
export function injectFromHandshake(
  clock: Clock,
  plant: Plant,
  injections: readonly Injection[],
  hook: HandshakeHook,
  apply: (i: Injection, t: number) => void,
  onZero: () => void,
): ScheduledInjections {
  let on: ScheduledInjections | undefined;
  let stopped = false;
  const waiting = injections.slice().sort((a, b) => a.at - b.at);
  hook(() => {
    hook(undefined);
    if (stopped) return;
    onZero();
    on = injectOnPlantTime(clock, plant, clock.now(), injections, apply);
  });
  return {
    get pending() {
      return on ? on.pending : waiting;
    },
    stop: () => {
      stopped = true;
      hook(undefined);
      on?.stop();
    },
  };
}
