/**
 * The rig file `twolink setup` writes: the file as written, with what setup measured in place of what
 * it believed: each encoder's `countsPerRev`, `sign` and `zeroDeg`, and a `wiring` section when the
 * motors or encoders are not on the README's channels (removed when they are). Every change is listed
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
export function correctedRigFile(raw: Record<string, unknown>, rig: Rig, f: Findings): { file: Record<string, unknown>; changes: RigChange[] } {
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
  const stepOf: Record<string, string> = { motorOutput: 'motors', motorSign: 'motors', encoderInput: 'encoders', boardCountsPerRev: 'encoders' };
  for (const k of Object.keys(after)) {
    if (!same(before[k], after[k])) changes.push({ field: `wiring.${k}`, from: before[k], to: after[k], step: stepOf[k]! });
  }
  if (Object.keys(wiring).length) out.wiring = wiring;
  else delete out.wiring;
  return { file: out, changes };
}

/** The changes as lines for people: `encoders[0].sign: 1 -> -1 (encoder 1)`. */
export function describeChanges(changes: readonly RigChange[]): string[] {
  return changes.map((c) => `${c.field}: ${JSON.stringify(c.from)} -> ${JSON.stringify(c.to)} (${c.step})`);
}
