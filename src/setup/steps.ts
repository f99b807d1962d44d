/**
 * The steps of `twolink setup` as pure functions of measured evidence: each takes what the board
 * reported while the arm was moved (by a hand, by gravity, by a small motor pulse) and says pass,
 * warn or fail, with the evidence and the exact fix, and what it found about the wiring. The driver
 * (driver.ts) collects the evidence; these functions decide. No I/O, no clock.
 *
 * Channels are the board's (outputs and encoder inputs, 0-based here, 1-based in messages); joints
 * are the arm's. Angles in the evidence are degrees, durations seconds, duties fractions of the supply.
 */
import type { Rig } from '../config/load.js';
import { hangingDeg } from '../model/builtins.js';
import { gravityTerms } from '../model/dynamics.js';
import { asPair, isTwoLink, J, pairOf, type Mat2, type Pair } from '../model/types.js';

export type StepStatus = 'pass' | 'warn' | 'fail' | 'skip';

/** One step's verdict. */
export interface StepResult {
  name: string;
  status: StepStatus;
  /** One line: what the step found. */
  summary: string;
  /** What was measured (angles [deg], counts, duties, times [s]). */
  evidence: Record<string, unknown>;
  /** The exact fix, or null when there is nothing to fix. */
  fix: string | null;
  /** The rig file written compensates for what this step found (the arm can run as it is wired). */
  corrected: boolean;
}

/** What setup has found about the arm so far, per joint (channels 0-based). */
export interface Findings {
  /** The board's encoder input that reads the joint. */
  encoderInput: number[];
  /** +1 when the counts rise as the joint turns counter-clockwise. */
  encoderSign: (1 | -1)[];
  /** Counts per joint revolution the encoder really gives. */
  countsPerRev: number[];
  /** Counts per revolution the board reports for the joint's input. */
  boardCountsPerRev: number[];
  /** Joint angle where the counts are zero (the pose at power-on) [deg]. */
  zeroDeg: number[];
  /** The board's motor output that drives the joint. */
  motorOutput: number[];
  /** +1 when a positive duty turns the joint counter-clockwise. */
  motorSign: (1 | -1)[];
  /** Smallest duty that moved the joint near hanging (dead band and static friction), or NaN. */
  startDuty: number[];
  /** Smallest duty that started the joint from rest near hanging, [ccw, cw] (a pulse each way), or NaN. */
  breakawayDuty: [number, number][];
  /** Back-EMF constant = torque constant [V s/rad = N m/A] from the speed test, or NaN when not measured. */
  ke: number[];
  /** Soft limits proposed from the mechanical stops [deg], or null when not found. */
  limitsDeg: ({ minDeg: number; maxDeg: number } | null)[];
}

const DEG = 180 / Math.PI;
const r1 = (v: number): number => Math.round(v * 10) / 10;
const r3 = (v: number): number => Math.round(v * 1000) / 1000;

/** What the rig file believes, as Findings (the starting point, and what the changes are against). */
export function believed(rig: Rig): Findings {
  const ids = [...Array(rig.joints).keys()];
  const w = rig.wiring;
  return {
    encoderInput: w ? w.encoderInput.slice() : ids.slice(),
    encoderSign: rig.encoders.map((e) => e.sign),
    countsPerRev: rig.encoders.map((e) => e.countsPerRev),
    boardCountsPerRev: w ? w.boardCountsPerRev.slice() : rig.encoders.map((e) => e.countsPerRev),
    zeroDeg: rig.encoders.map((e) => r1(e.zero * DEG)),
    motorOutput: w ? w.motorOutput.slice() : ids.slice(),
    motorSign: w ? (w.motorSign.slice() as (1 | -1)[]) : ids.map(() => 1 as const),
    startDuty: ids.map(() => Number.NaN),
    breakawayDuty: ids.map(() => [Number.NaN, Number.NaN]),
    ke: ids.map(() => Number.NaN),
    limitsDeg: ids.map(() => null),
  };
}

// ------------------------------------------------------------------ 1. the board

/** What the board said at connect. */
export interface BoardEvidence {
  firmware: string;
  board: string;
  protocol: string;
  joints: number;
  /** Counts per revolution the board reports, per encoder input. */
  countsPerRev: number[];
}

export function checkBoard(b: BoardEvidence, rig: Rig): StepResult {
  const evidence = {
    firmware: b.firmware,
    board: b.board,
    protocol: b.protocol,
    joints: b.joints,
    boardCountsPerRev: b.countsPerRev,
    rigCountsPerRev: rig.encoders.map((e) => e.countsPerRev),
  };
  if (b.joints !== rig.joints) {
    return {
      name: 'board',
      status: 'fail',
      summary: `the board drives ${b.joints} joint(s), the rig file describes ${rig.joints}`,
      evidence,
      fix: `flash the firmware built for ${rig.joints} joints, or use a rig file for a ${b.joints}-joint arm`,
      corrected: false,
    };
  }
  const differ = b.countsPerRev.map((c, i) => (c !== rig.encoders[i]!.countsPerRev ? i : -1)).filter((i) => i >= 0);
  if (differ.length) {
    return {
      name: 'board',
      status: 'warn',
      summary: `${b.firmware} on a ${b.board}, protocol ${b.protocol}; counts per revolution differ from the rig file on input ${differ.map((i) => i + 1).join(', ')} (board ${differ.map((i) => b.countsPerRev[i]).join(', ')}, rig file ${differ.map((i) => rig.encoders[i]!.countsPerRev).join(', ')}): the encoder step measures which is right`,
      evidence,
      fix: null,
      corrected: false,
    };
  }
  return {
    name: 'board',
    status: 'pass',
    summary: `${b.firmware} on a ${b.board}, protocol ${b.protocol}, counts per revolution ${b.countsPerRev.join(', ')} as the rig file says`,
    evidence,
    fix: null,
    corrected: false,
  };
}

// ------------------------------------------------------------------ 2. the encoders, by hand

/** Counts per board input before and after joint `joint` was turned `deg` counter-clockwise by hand, the other joint held. */
export interface HandMove {
  joint: number;
  /** How far the person was asked to turn it [deg]. */
  deg: number;
  before: number[];
  after: number[];
}

/** Relative tolerance on counts per revolution from a hand move (a person turns a joint "to horizontal" within ~10 deg). */
export const CPR_TOLERANCE = 0.2;

/** Verdict on the counts per revolution: the measurement against the rig file's C and the board's N (on input `input`). */
function judgeCountsPerRev(
  measured: number,
  C: number,
  N: number,
  input: number,
  j: number,
  rig: Rig,
  f: Findings,
): { status: StepStatus; problems: string[]; fixes: string[]; correctable: boolean } {
  const near = (a: number, b: number): boolean => Math.abs(a / b - 1) <= CPR_TOLERANCE;
  const problems: string[] = [];
  const fixes: string[] = [];
  if (near(measured, C)) {
    f.countsPerRev[j] = C;
    if (N !== C && input !== j && N === rig.encoders[input]?.countsPerRev) {
      problems.push(
        `(the board's ${N} counts per revolution on input ${input + 1} are joint ${input + 1}'s: they fit once the cables are swapped back; the written rig file accepts them meanwhile: wiring.boardCountsPerRev)`,
      );
      return { status: 'pass', problems, fixes, correctable: true };
    }
    if (N === C) return { status: 'pass', problems, fixes, correctable: true };
    problems.push(
      `the board's firmware reports ${N} counts per revolution on input ${input + 1}, but the encoder gives about ${Math.round(measured)} (the rig file's ${C})`,
    );
    fixes.push(
      `set TL_CPR_${input + 1} to ${C} in firmware-protocol/firmware/twolink_fw/config.h and flash it again (the written rig file accepts the board's ${N} meanwhile: wiring.boardCountsPerRev)`,
    );
    return { status: 'fail', problems, fixes, correctable: true };
  }
  if (near(measured, N)) {
    f.countsPerRev[j] = N;
    problems.push(
      `the rig file says ${C} counts per revolution, the board and the measurement say ${N} (measured about ${Math.round(measured)})`,
    );
    fixes.push(`encoders[${j}].countsPerRev = ${N} (written)`);
    return { status: 'warn', problems, fixes, correctable: true };
  }
  f.countsPerRev[j] = Math.round(measured);
  problems.push(`it gives about ${Math.round(measured)} counts per revolution: neither the rig file's ${C} nor the board's ${N}`);
  fixes.push(
    `work out lines x 4 x gear ratio of joint ${j + 1}'s encoder, put it in encoders[${j}].countsPerRev and TL_CPR_${input + 1} (config.h), and run setup again (the measured figure is written, but a hand move is only good to ~10%)`,
  );
  return { status: 'fail', problems, fixes, correctable: false };
}

/** The change of counts on each input as the joint was turned, and the input that turned the most. */
function movedInput(m: HandMove, boardCpr: readonly number[]): { d: number[]; turns: number[]; input: number } {
  const d = m.after.map((a, i) => a - m.before[i]!);
  // Turns of each input as the board's counts per revolution imply.
  const turns = d.map((x, i) => Math.abs(x) / boardCpr[i]!);
  return { d, turns, input: turns.indexOf(Math.max(...turns)) };
}

/** Verdict when no input counted as the joint turned: the encoder's power, wires or shaft, nothing a rig file fixes. */
function silentEncoder(name: string, m: HandMove, d: number[], evidence: Record<string, unknown>): StepResult {
  const j = m.joint;
  return {
    name,
    status: 'fail',
    summary: `no encoder input counted when joint ${j + 1} was turned ${m.deg} deg (changes ${d.join(', ')} counts)`,
    evidence,
    fix: `check joint ${j + 1}'s encoder: its 5 V and ground, its A and B wires to the board (docs/first-arm.md, "Wire it"), and that its shaft turns with the joint; then run twolink setup again`,
    corrected: false,
  };
}

/** Verdict on the input that reads joint `j` and the way it counts, against the rig file (the written one maps either). */
function judgeWiring(j: number, input: number, sign: 1 | -1, rig: Rig): { status: StepStatus; problems: string[]; fixes: string[] } {
  const problems: string[] = [];
  const fixes: string[] = [];
  let status: StepStatus = 'pass';
  if (input !== j) {
    status = 'fail';
    problems.push(`joint ${j + 1}'s encoder is on input ${input + 1}`);
    fixes.push(
      `swap the two encoder cables at the board (joint ${j + 1}'s goes to encoder ${j + 1}'s pins; the written rig file maps it meanwhile: wiring.encoderInput)`,
    );
  }
  if (sign !== rig.encoders[j]!.sign) {
    status = 'fail';
    problems.push(
      `it counts ${sign > 0 ? 'up' : 'down'} as the joint turns counter-clockwise (the rig file says sign ${rig.encoders[j]!.sign})`,
    );
    fixes.push(`swap encoder ${j + 1}'s A and B wires, or keep encoders[${j}].sign = ${sign} (written)`);
  }
  return { status, problems, fixes };
}

/**
 * Which input reads joint `m.joint`, which way it counts, and how many counts a revolution gives.
 * `boardCpr` is per input, what the board reports.
 */
export function checkEncoder(m: HandMove, boardCpr: readonly number[], rig: Rig, f: Findings): StepResult {
  const j = m.joint;
  const name = `encoder ${j + 1}`;
  const { d, turns, input } = movedInput(m, boardCpr);
  const counts = d[input]!;
  const C = rig.encoders[j]!.countsPerRev;
  const expected = (C * m.deg) / 360;
  const evidence: Record<string, unknown> = {
    movedDeg: m.deg,
    countsBefore: m.before,
    countsAfter: m.after,
    deltaCounts: d,
    input: input + 1,
  };
  if (Math.abs(counts) < Math.max(8, 0.05 * expected)) return silentEncoder(name, m, d, evidence);
  const others = turns.filter((_, i) => i !== input);
  const measured = (Math.abs(counts) * 360) / m.deg;
  const N = boardCpr[input]!;
  const sign: 1 | -1 = counts > 0 ? 1 : -1;
  f.encoderInput[j] = input;
  f.encoderSign[j] = sign;
  f.boardCountsPerRev[j] = N;
  const wiring = judgeWiring(j, input, sign, rig);
  const { problems, fixes } = wiring;
  let status = wiring.status;
  const cpr = judgeCountsPerRev(measured, C, N, input, j, rig, f);
  problems.push(...cpr.problems);
  fixes.push(...cpr.fixes);
  if (cpr.status === 'fail' || (cpr.status === 'warn' && status === 'pass')) status = cpr.status;
  if (others.some((t) => t * 360 > 0.2 * m.deg)) {
    if (status === 'pass') status = 'warn';
    problems.push('the other input counted too: was the other joint held still?');
  }
  evidence.countsPerRevMeasured = Math.round(measured);
  evidence.sign = sign;
  evidence.boardCountsPerRev = N;
  evidence.rigCountsPerRev = C;
  return {
    name,
    status,
    summary: problems.length
      ? `joint ${j + 1}: ${problems.join('; ')}`
      : `joint ${j + 1} is read by input ${input + 1}, counting up counter-clockwise, about ${Math.round(measured)} counts per revolution (${C} expected)`,
    evidence,
    fix: fixes.length ? fixes.join('; ') : null,
    corrected: cpr.correctable && fixes.length > 0,
  };
}

// ------------------------------------------------------------------ 3. the zero, against gravity

/** The pose the arm hangs in with the motors off (model/builtins.ts: `run --reconnect` re-takes a zero there too). */
export { hangingDeg };

/** Counts per input with the arm at rest, hanging, motors off. */
export interface RestEvidence {
  counts: number[];
  /** How long it took to come to rest [s] (Infinity: it did not). */
  settledS: number;
}

/** Degrees within which the pose at power-on counts as the rig file's zero (a joint's friction holds it up to a few degrees from hanging). */
export const ZERO_TOLERANCE_DEG = 5;

/** Where the counts put the hanging arm, and the zeroDeg that makes it read the hanging pose. */
export function checkZero(r: RestEvidence, rig: Rig, f: Findings): StepResult {
  const hang = hangingDeg(rig.joints);
  const readDeg = hang.map((_, j) => r1(f.zeroDeg[j]! + (f.encoderSign[j]! * r.counts[f.encoderInput[j]!]! * 360) / f.countsPerRev[j]!));
  const off = readDeg.map((q, j) => r1(q - hang[j]!));
  const evidence = {
    restCounts: r.counts,
    readDeg,
    hangingDeg: hang,
    offDeg: off,
    settledS: Number.isFinite(r.settledS) ? r1(r.settledS) : null,
  };
  const fixes: string[] = [];
  const bad = off.map((o, j) => (Math.abs(o) > ZERO_TOLERANCE_DEG ? j : -1)).filter((j) => j >= 0);
  for (const j of bad) {
    const z = r1(f.zeroDeg[j]! - off[j]!);
    fixes.push(
      `joint ${j + 1} was at ${z} deg when the board was powered on, not at zeroDeg ${f.zeroDeg[j]} deg: power the board on with the arm hanging (joint 1 at -90, joint 2 at 0 deg), or keep encoders[${j}].zeroDeg = ${z} (written; right only if the arm is powered on in that pose every time)`,
    );
    f.zeroDeg[j] = z;
  }
  const settle = Number.isFinite(r.settledS) ? '' : '; the arm did not come to rest (is something pushing it, or a motor held on?)';
  if (bad.length === 0) {
    return {
      name: 'zero',
      status: Number.isFinite(r.settledS) ? 'pass' : 'warn',
      summary: `the hanging arm reads [${readDeg.join(', ')}] deg (hanging is [${hang.join(', ')}])${settle}`,
      evidence,
      fix: settle ? 'let the arm hang freely and run setup again' : null,
      corrected: false,
    };
  }
  return {
    name: 'zero',
    status: 'warn',
    summary: `the hanging arm reads [${readDeg.join(', ')}] deg, not [${hang.join(', ')}]: the board was powered on with joint ${bad.map((j) => j + 1).join(' and ')} away from zeroDeg${settle}`,
    evidence,
    fix: fixes.join('; '),
    corrected: true,
  };
}

// ------------------------------------------------------------------ 4. the motors, one pulse each

/** Samples while one board output ramped up from zero, the arm near hanging. */
export interface PulseEvidence {
  output: number;
  /** [s] since the pulse started */
  t: number[];
  /** Duty on the output at each sample. */
  duty: number[];
  /** Joint angles [rad] per sample (from the encoders as found), q[k][j]. */
  q: number[][];
}

/** Angle [deg] a joint must move for the pulse to count as having moved it. */
export const MOVE_DEG = 1;

/**
 * The direction the hanging arm moves in when joint j gets a small static torque: K^-1 e_j, with K
 * the gravity stiffness dG/dq at the hanging pose. A torque on joint 1 swings link 1 with link 2
 * staying vertical (q2 moves back by as much); a torque on joint 2 moves mostly joint 2.
 */
export function responseDirections(rig: Rig): number[][] {
  if (!isTwoLink(rig.arm)) return [[1]];
  const arm = rig.arm;
  const h = 1e-6;
  const q0 = asPair(
    hangingDeg(2).map((d) => d / DEG),
    'the hanging pose',
  );
  const K: Mat2 = [
    [0, 0],
    [0, 0],
  ];
  for (const c of J) {
    const qp: Pair = [q0[0], q0[1]];
    const qm: Pair = [q0[0], q0[1]];
    qp[c] += h;
    qm[c] -= h;
    const gp = asPair(gravityTerms(arm, qp));
    const gm = asPair(gravityTerms(arm, qm));
    for (const r of J) K[r][c] = (gp[r] - gm[r]) / (2 * h);
  }
  const det = K[0][0] * K[1][1] - K[0][1] * K[1][0];
  const inv: Mat2 = [
    [K[1][1] / det, -K[0][1] / det],
    [-K[1][0] / det, K[0][0] / det],
  ];
  return pairOf((j) => [inv[0][j], inv[1][j]]);
}

/** Which joint output `p.output` turns, which way, and from what duty. */
export function checkMotor(p: PulseEvidence, rig: Rig, f: Findings, directions: number[][]): StepResult {
  const name = `motor output ${p.output + 1}`;
  const n = rig.joints;
  const k0 = Math.min(4, p.q.length - 1);
  const q0 = [...Array(n).keys()].map((j) => p.q.slice(0, k0 + 1).reduce((s, q) => s + q[j]!, 0) / (k0 + 1));
  const last = p.q[p.q.length - 1]!;
  const dq = q0.map((a, j) => last[j]! - a);
  const peakDuty = p.duty.reduce((m, d) => (Math.abs(d) > Math.abs(m) ? d : m), 0);
  const moveAt = movedAt(p);
  const evidence: Record<string, unknown> = {
    output: p.output + 1,
    peakDuty: r3(peakDuty),
    movedDeg: dq.map((x) => r1(x * DEG)),
    seconds: r3(p.t[p.t.length - 1] ?? 0),
  };
  if (Math.max(...dq.map((x) => Math.abs(x * DEG))) < MOVE_DEG || peakDuty === 0) {
    return {
      name,
      status: 'fail',
      summary: `output ${p.output + 1} moved nothing at duties up to ${r3(peakDuty)}`,
      evidence,
      fix: `check motor output ${p.output + 1}: the driver's supply and enable, its PWM and DIR wires (docs/first-arm.md, "Wire it"), the motor's leads; then run setup again`,
      corrected: false,
    };
  }
  const norm = Math.hypot(...dq);
  const scores = directions.map((u) => dq.reduce((s, x, j) => s + x * u[j]!, 0) / (norm * Math.hypot(...u)));
  let joint = 0;
  for (let j = 1; j < scores.length; j++) if (Math.abs(scores[j]!) > Math.abs(scores[joint]!)) joint = j;
  const sign: 1 | -1 = scores[joint]! * peakDuty > 0 ? 1 : -1;
  const startDuty = moveAt >= 0 ? Math.abs(p.duty[moveAt]!) : Number.NaN;
  f.motorOutput[joint] = p.output;
  f.motorSign[joint] = sign;
  f.startDuty[joint] = startDuty;
  evidence.joint = joint + 1;
  evidence.sign = sign;
  evidence.match = scores.map(r3);
  evidence.startDuty = r3(startDuty);
  const problems: string[] = [];
  const fixes: string[] = [];
  if (joint !== p.output) {
    problems.push(`output ${p.output + 1} drives joint ${joint + 1}`);
    fixes.push(`swap the two motors' cables at the driver (the written rig file maps them meanwhile: wiring.motorOutput)`);
  }
  if (sign < 0) {
    problems.push(`a positive duty turns joint ${joint + 1} clockwise`);
    fixes.push(`swap the two leads of joint ${joint + 1}'s motor at the driver, or keep wiring.motorSign[${joint}] = -1 (written)`);
  }
  const ambiguous = scores.length > 1 && Math.abs(Math.abs(scores[0]!) - Math.abs(scores[1]!)) < 0.1;
  const base = `output ${p.output + 1} turns joint ${joint + 1} ${sign > 0 ? 'counter-clockwise' : 'clockwise'} for a positive duty; it starts moving at duty ${r3(startDuty)}`;
  if (ambiguous) {
    return {
      name,
      status: 'warn',
      summary: `${base}, but both joints moved alike (match ${scores.map(r3).join(', ')}): the joint is a guess`,
      evidence,
      fix: 'hold the other joint still by hand and run setup again',
      corrected: false,
    };
  }
  if (problems.length === 0) return { name, status: 'pass', summary: base, evidence, fix: null, corrected: false };
  return { name, status: 'fail', summary: `${problems.join('; ')} (${base})`, evidence, fix: fixes.join('; '), corrected: true };
}

/** The sample at which the pulse first moved a joint MOVE_DEG / 2 from where it rested, or -1. */
function movedAt(p: PulseEvidence): number {
  const k0 = Math.min(4, p.q.length - 1);
  const n = p.q[0]?.length ?? 0;
  const q0 = [...Array(n).keys()].map((j) => p.q.slice(0, k0 + 1).reduce((s, q) => s + q[j]!, 0) / (k0 + 1));
  return p.q.findIndex((q) => q.some((x, j) => Math.abs(x - q0[j]!) * DEG > MOVE_DEG / 2));
}

/** The duty [fraction] at which the pulse started the joint, as a magnitude, or NaN when it moved nothing. */
export function breakawayOf(p: PulseEvidence): number {
  const k = movedAt(p);
  return k >= 0 ? Math.abs(p.duty[k]!) : Number.NaN;
}

/**
 * Joint `joint`'s breakaway duty per direction, from its output's pulse each way (`up`: a positive
 * duty, `down`: a negative one) and the motor's sign as found: [ccw, cw] into the findings, for the
 * rig file (motors[j].breakawayDuty). A direction that did not start is a warning.
 */
export function checkBreakaway(joint: number, up: PulseEvidence, down: PulseEvidence, f: Findings): StepResult {
  const byDuty = [breakawayOf(up), breakawayOf(down)];
  const pair: [number, number] = f.motorSign[joint] === 1 ? [byDuty[0]!, byDuty[1]!] : [byDuty[1]!, byDuty[0]!];
  f.breakawayDuty[joint] = [r3(pair[0]), r3(pair[1])];
  const evidence = { joint: joint + 1, breakawayDuty: pair.map(r3), output: up.output + 1 };
  const name = `breakaway ${joint + 1}`;
  const text = `joint ${joint + 1} starts from rest at duty ${r3(pair[0])} counter-clockwise, ${r3(pair[1])} clockwise`;
  if (pair.some((d) => !Number.isFinite(d))) {
    return {
      name,
      status: 'warn',
      summary: `joint ${joint + 1} did not start one way within the pulse (${text})`,
      evidence,
      fix: 'raise --pulse-duty, or free the joint, and run setup again',
      corrected: false,
    };
  }
  return { name, status: 'pass', summary: `${text} (written: motors[${joint}].breakawayDuty)`, evidence, fix: null, corrected: false };
}

/** Both outputs must drive different joints: else the evidence contradicts itself. */
export function checkMotorsDistinct(results: StepResult[]): StepResult | undefined {
  const joints = results.map((r) => r.evidence.joint).filter((j): j is number => typeof j === 'number');
  if (joints.length === 2 && joints[0] === joints[1]) {
    return {
      name: 'motors',
      status: 'fail',
      summary: `both outputs seem to move joint ${joints[0]}: one of them moves the other joint too little to tell`,
      evidence: { joints },
      fix: 'hold the joint that should not move by hand during each pulse, or raise --pulse-duty, and run setup again',
      corrected: false,
    };
  }
  return undefined;
}
