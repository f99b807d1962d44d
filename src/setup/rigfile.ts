/**
 * The rig file `twolink setup` writes: the file as written, with what setup measured in place of what
 * it believed: each encoder's `countsPerRev`, `sign` and `zeroDeg`, and a `wiring` section when the
 * motors or encoders are not on the channels of docs/first-arm.md's wiring table (removed when they are), each motor's breakaway
 * duty per direction. Every change is listed
 * with the step that found it.
 */
import type { Rig } from '../config/load.js';
import { believed, type Findings } from './steps.js';

/** One field that changes, and why. */
export interface RigChange {
  field: string;
  from: unknown;
  to: unknown;
  /** The step that found it. */
  step: string;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The corrected rig file (raw JSON) and the list of changes against `raw` as resolved in `rig`. */
export function correctedRigFile(
  raw: Record<string, unknown>,
  rig: Rig,
  f: Findings,
): { file: Record<string, unknown>; changes: RigChange[] } {
  const out = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
  const was = believed(rig);
  const changes: RigChange[] = [];
  const n = rig.joints;
  const rawEnc = (Array.isArray(out.encoders) ? out.encoders : []) as Record<string, unknown>[];
  out.encoders = [...Array(n).keys()].map((j) => {
    const e = { ...(rawEnc[j] ?? {}) };
    const set = (key: string, from: number, to: number, step: string): void => {
      if (from !== to) changes.push({ field: `encoders[${j}].${key}`, from, to, step });
      e[key] = to;
    };
    set('countsPerRev', was.countsPerRev[j]!, f.countsPerRev[j]!, `encoder ${j + 1}`);
    set('sign', was.encoderSign[j]!, f.encoderSign[j]!, `encoder ${j + 1}`);
    set('zeroDeg', was.zeroDeg[j]!, f.zeroDeg[j]!, 'zero');
    return e;
  });
  writeMotorConstants(out, rig, f, changes);
  writeLimits(out, rig, f, changes);
  writeBreakaway(out, rig, f, changes);
  const wiring: Record<string, number[]> = {};
  if (!f.motorOutput.every((c, j) => c === j)) wiring.motorOutput = f.motorOutput.map((c) => c + 1);
  if (!f.motorSign.every((s) => s === 1)) wiring.motorSign = f.motorSign.slice();
  if (!f.encoderInput.every((c, j) => c === j)) wiring.encoderInput = f.encoderInput.map((c) => c + 1);
  if (!f.boardCountsPerRev.every((c, j) => c === f.countsPerRev[j])) wiring.boardCountsPerRev = f.boardCountsPerRev.slice();
  const before: Record<string, number[]> = {
    motorOutput: was.motorOutput.map((c) => c + 1),
    motorSign: was.motorSign.slice(),
    encoderInput: was.encoderInput.map((c) => c + 1),
    boardCountsPerRev: was.boardCountsPerRev.slice(),
  };
  const after: Record<string, number[]> = {
    motorOutput: f.motorOutput.map((c) => c + 1),
    motorSign: f.motorSign.slice(),
    encoderInput: f.encoderInput.map((c) => c + 1),
    boardCountsPerRev: f.boardCountsPerRev.slice(),
  };
  const stepOf: Record<string, string> = {
    motorOutput: 'motors',
    motorSign: 'motors',
    encoderInput: 'encoders',
    boardCountsPerRev: 'encoders',
  };
  for (const k of Object.keys(after)) {
    if (!same(before[k], after[k])) changes.push({ field: `wiring.${k}`, from: before[k], to: after[k], step: stepOf[k]! });
  }
  if (Object.keys(wiring).length) out.wiring = wiring;
  else delete out.wiring;
  return { file: out, changes };
}

/**
 * ke and kt (= ke in SI units) of each motor the speed test measured. A mock rig's plant takes its
 * motors from the nominal ones field by field, so its motors are made explicit first: the simulated
 * arm stays the same arm when the nominal motor changes under it.
 */
function writeMotorConstants(out: Record<string, unknown>, rig: Rig, f: Findings, changes: RigChange[]): void {
  if (!f.ke.some((k, j) => Number.isFinite(k) && k !== rig.motors[j]!.ke)) return;
  if (rig.plant && out.plant && typeof out.plant === 'object')
    (out.plant as Record<string, unknown>).motors = rig.plant.motors.map(({ breakawayDuty: _measured, ...m }) => ({ ...m })); // the plant's motors: what setup measures is not the plant's
  const rawMotors = (Array.isArray(out.motors) ? out.motors : rig.motors.map((m) => ({ ...m }))) as Record<string, unknown>[];
  out.motors = rawMotors.map((m, j) => {
    const k = f.ke[j];
    if (k === undefined || !Number.isFinite(k) || k === rig.motors[j]!.ke) return m;
    const step = `motor ${j + 1} constant`;
    changes.push({ field: `motors[${j}].ke`, from: rig.motors[j]!.ke, to: k, step });
    if (k !== rig.motors[j]!.kt) changes.push({ field: `motors[${j}].kt`, from: rig.motors[j]!.kt, to: k, step });
    return { ...m, ke: k, kt: k };
  });
}

/** Soft limits from the mechanical stops: `limits[j].minDeg` and `maxDeg`, the other fields as written. */
function writeLimits(out: Record<string, unknown>, rig: Rig, f: Findings, changes: RigChange[]): void {
  if (!f.limitsDeg.some((l) => l !== null)) return;
  const rawLimits = (Array.isArray(out.limits) ? out.limits : rig.limits.map(() => ({}))) as Record<string, unknown>[];
  out.limits = rawLimits.map((l, j) => {
    const p = f.limitsDeg[j];
    if (!p) return l;
    const was = {
      minDeg: Math.round(((rig.limits[j]!.min * 180) / Math.PI) * 2) / 2,
      maxDeg: Math.round(((rig.limits[j]!.max * 180) / Math.PI) * 2) / 2,
    };
    for (const k of ['minDeg', 'maxDeg'] as const)
      if (was[k] !== p[k]) changes.push({ field: `limits[${j}].${k}`, from: was[k], to: p[k], step: `limits ${j + 1}` });
    return { ...l, minDeg: p.minDeg, maxDeg: p.maxDeg };
  });
}

/** Each joint's breakaway duty per direction the motor pulses measured: `motors[j].breakawayDuty` [ccw, cw]. */
function writeBreakaway(out: Record<string, unknown>, rig: Rig, f: Findings, changes: RigChange[]): void {
  if (!f.breakawayDuty.some((d) => d.every(Number.isFinite))) return;
  const rawMotors = (Array.isArray(out.motors) ? out.motors : rig.motors.map((m) => ({ ...m }))) as Record<string, unknown>[];
  out.motors = rawMotors.map((m, j) => {
    const d = f.breakawayDuty[j];
    if (!d?.every(Number.isFinite)) return m;
    const was = rig.motors[j]?.breakawayDuty ?? null;
    if (!same(was, d)) changes.push({ field: `motors[${j}].breakawayDuty`, from: was, to: d, step: `breakaway ${j + 1}` });
    return { ...m, breakawayDuty: d.slice() };
  });
}

/** The changes as lines for people: `encoders[0].sign: 1 -> -1 (encoder 1)`. */
export function describeChanges(changes: readonly RigChange[]): string[] {
  return changes.map((c) => `${c.field}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)} (${c.step})`);
}
