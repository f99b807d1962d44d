/**
 * The flaws of a gearmotor joint, measured with what a user has (a motor-side encoder and the duty):
 * a slow sweep of one joint through the pose where gravity on it changes sign, back and forth at two
 * speeds, the other joint held (issue 33 item 5).
 *
 * Why there. The play sits between the encoder (motor side) and the link; the link hangs on one
 * flank of the gear or the other, the one gravity presses it on. Where gravity's torque on the joint
 * changes sign the link crosses to the other flank while the motor side moves through the play, and
 * the motor side then lags or leads the link by half the play: tau_g(theta) = G(theta - s b/2) with s
 * the side gravity presses (the sign of G). Far enough on either side, the duty's torque is
 *
 *   tau_m = k G(theta) - k (b/2) s G'(theta) + J qdd + fc(dir) dir + fv qd
 *
 * linear in k (the gravity scale: the masses need not be known), the play b, an inertia J, Coulomb
 * friction per direction fc(+), fc(-) and viscous friction fv (two speeds set it apart from Coulomb).
 * Rows within `band` of the gravity zero (the play's crossing), slow rows (Stribeck's range, the
 * ends), the breakaway's transient after each start from rest and rows where the loop rattles through
 * the play are left out (on the light link 2 the play is a step of only m2 d2 g b, 0.01 N m on the
 * flawed mock: those rows had buried it). G and G' are the nominal model's gravity shape at the
 * encoder's angles, the other joint's link put off its encoder by half its play (otherPlayDeg).
 *
 * The breakaway: at each end of a pass the joint rests with gravity pressing the same flank, and the
 * next pass starts it again; the friction holding it (the duty's torque less the gear's load k G - k
 * (b/2) s G') climbs until it lets go. Its peak there, per direction (the median of the starts), is
 * the breakaway.
 *
 * Pure math on ticks: no I/O, no clock.
 */
import { Matrix, QrDecomposition, inverse } from 'ml-matrix';
import type { Rig } from '../config/load.js';
import { twoLinkArm } from '../config/load.js';
import type { PathSpec } from '../model/builtins.js';
import { computeGravity, createActuatedArmData, createActuatedArmModel, motorTorque, type ActuatedArmModel } from '../model/actuated.js';
import type { PathStep } from '../model/trajectory.js';
import type { Joint } from '../model/types.js';
import { griddedSegments, type FitTick, type GriddedSegment } from './fit.js';
import { derivatives, zeroPhaseLowpass } from './filter.js';

const DEG = Math.PI / 180;

/** How to sweep. Angles [deg], times [s]. */
export interface SweepOptions {
  /** Half the sweep about the gravity zero [deg]. @default 20 */
  amplitudeDeg?: number;
  /** One slow pass [s]. @default 6 */
  slowS?: number;
  /** One fast pass [s]. @default 2.5 */
  fastS?: number;
  /** Rest at each end [s]. @default 0.6 */
  holdS?: number;
  /** Rows nearer the gravity zero than this [deg] are left out (the play's crossing). @default 5 */
  bandDeg?: number;
  /** Rows slower than this (plan) [deg/s] are left out (Stribeck's range). @default 4 */
  minSpeedDegS?: number;
}

/** A SweepError: the rig's limits leave no room for the sweep, or the data gave no fit. */
export class SweepError extends Error {
  override readonly name = 'SweepError';
}

/** What one joint's sweep measured. Directions: [ccw (+), cw (-)]. */
export interface SweepFigures {
  joint: number;
  /** The play between the encoder and the link [deg], and its standard deviation (from the fit's residual: optimistic). */
  playDeg: number;
  playStdDeg: number;
  /** Coulomb friction per direction [N m]. */
  coulombNm: [number, number];
  /** Viscous friction [N m s/rad] (with any error of the motor's back-EMF constant). */
  viscousNms: number;
  /** Breakaway friction per direction [N m] (NaN where no start was seen). */
  breakawayNm: [number, number];
  /** Starts seen per direction. */
  starts: [number, number];
  /** The gravity's scale against the nominal model's (1: the nominal masses are right). */
  gravityScale: number;
  /** The inertia the sweep saw [kg m^2] (poorly excited: slow passes). */
  inertia: number;
  residualRmsNm: number;
  rows: number;
}

/** Link 1's angle from hanging while joint 2 is swept [deg]. */
const JOINT2_LINK1_DEG = 30;

/** The pose about which joint `joint` (0-based) is swept: gravity on it changes sign there. Joint 1's: both links hanging; joint 2's: link 1 30 deg off hanging, link 2 hanging. */
export function sweepCentre(rig: Rig, joint: number, o: SweepOptions = {}): [number, number] {
  twoLinkArm(rig);
  const a = (o.amplitudeDeg ?? 20) * DEG;
  // Joint 2's sweep holds link 1 off hanging (JOINT2_LINK1_DEG), so that gravity keeps link 1 on one
  // flank of its own play: hanging, link 1 would swing in it as link 2 moves, and its motor-side encoder
  // could not see that.
  const centre: [number, number] = joint === 0 ? [-90 * DEG, 0] : [(-90 + JOINT2_LINK1_DEG) * DEG, -JOINT2_LINK1_DEG * DEG];
  const margin = 5 * DEG;
  rig.limits.slice(0, 2).forEach((l, i) => {
    const need = i === joint ? a + margin : margin;
    if (!(centre[i]! - need >= l.min && centre[i]! + need <= l.max)) {
      throw new SweepError(
        `${rig.file}: the play sweep of joint ${joint + 1} needs joint ${i + 1} at ${(centre[i]! / DEG).toFixed(0)} deg +- ${(need / DEG).toFixed(0)} deg ` +
          `(hanging), outside limits[${i}] (${(l.min / DEG).toFixed(0)}..${(l.max / DEG).toFixed(0)} deg)`,
      );
    }
  });
  return centre;
}

/**
 * The sweep of joint `joint`: from the centre (hanging) out to +A and back, out to -A and back,
 * slowly then fast, resting at the centre between passes (where gravity loads neither flank: the
 * starts from rest there measure the breakaway alone) and at each end.
 */
export function sweepPath(rig: Rig, joint: number, o: SweepOptions = {}): PathSpec {
  const centre = sweepCentre(rig, joint, o);
  const A = (o.amplitudeDeg ?? 20) * DEG;
  const slow = o.slowS ?? 6;
  const fast = o.fastS ?? 2.5;
  const hold = o.holdS ?? 0.6;
  const at = (x: number): number[] => centre.map((c, i) => (i === joint ? c + x : c));
  const steps: PathStep[] = [];
  for (const d of [slow / 2, fast / 2]) {
    for (const x of [A, -A])
      steps.push(
        { kind: 'hold', duration: hold },
        { kind: 'joint', to: at(x), duration: d },
        { kind: 'hold', duration: hold },
        { kind: 'joint', to: at(0), duration: d },
      );
  }
  steps.push({ kind: 'hold', duration: hold });
  return {
    name: `play-sweep-${joint + 1}`,
    description: `joint ${joint + 1} swept out to +-${(A / DEG).toFixed(0)} deg from hanging (where gravity on it changes sign) and back, in ${slow / 2} s then ${fast / 2} s a pass, resting between, the other joint held: the play, friction per direction, the breakaway`,
    start: { q: centre },
    steps,
  };
}

/** The gravity torque on `joint` and its derivative along that joint, at `q` (the nominal model). */
function gravityShape(model: ActuatedArmModel, joint: number, q: readonly number[]): { G: number; dG: number } {
  const data = createActuatedArmData(model);
  const h = 1e-4;
  const at = (dx: number): number =>
    computeGravity(
      model,
      data,
      q.map((v, i) => (i === joint ? v + dx : v)),
    )[joint]!;
  return { G: at(0), dG: (at(h) - at(-h)) / (2 * h) };
}

/** Per grid point, 1 where `bad`, widened by `reach` points each side. */
function widened(bad: (k: number) => boolean, n: number, reach: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (bad(k)) for (let l = Math.max(0, k - reach); l <= Math.min(n - 1, k + reach); l++) out[l] = 1;
  return out;
}

/** Least squares with the covariance of the estimate. */
function lsq(A: number[][], b: number[]): { x: number[]; cov: number[][]; rms: number } {
  const M = new Matrix(A);
  const x = new QrDecomposition(M).solve(Matrix.columnVector(b)).getColumn(0);
  const pred = M.mmul(Matrix.columnVector(x)).getColumn(0);
  const rss = b.reduce((s, v, i) => s + (v - pred[i]!) ** 2, 0);
  const dof = Math.max(1, b.length - x.length);
  const cov = inverse(M.transpose().mmul(M))
    .mul(rss / dof)
    .to2DArray();
  return { x, cov, rms: Math.sqrt(rss / b.length) };
}

/** The equations of one sweep: rows [G, s G', qdd, [qd > 0], -[qd < 0], qd] and the motor's torque, filtered alike. */
interface SweepEquations {
  A: number[][];
  b: number[];
}

/** What the breakaway needs of the grid: per start from rest at the centre, the torque and the angle from the start on. */
interface Start {
  dir: number;
  h: number;
  tau: number[];
  q: number[];
  rest: number;
}

function median(a: readonly number[]): number {
  return a.length ? a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)]! : Number.NaN;
}

/** What segmentEquations needs besides the segment. */
interface EquationOptions extends Required<Pick<SweepOptions, 'bandDeg' | 'minSpeedDegS'>> {
  cutoffHz: number;
  bandNm: number;
  /** One encoder count of the swept joint [rad]. */
  countRad: number;
  /** Half the other joint's play [rad] (0: none known), and the side its gravity presses it on decides its sign. */
  otherHalfPlay: number;
}

/** Encoder counts a joint must turn after a start from rest before its rows count, and the time the loop then settles [s] (two time constants of the default gains' 3 Hz PD, src/config/load.ts defaultGains). */
const START_COUNTS = 2;
const SETTLE_S = 0.15;

/**
 * Per grid point, 1 from each start from rest until the joint has turned START_COUNTS encoder counts
 * the planned way and then SETTLE_S more: the breakaway's transient. The plan moves while the motor
 * still sticks and the loop winds its torque up to the breakaway (4x the Coulomb level on the flawed
 * mock), then the joint lurches and the loop settles: rows there are stiction, not the sliding
 * friction and gravity the equations model (on joint 2 of the flawed mock they were most of the fit's
 * residual: 0.009 N m with them, 0.001 N m without).
 */
function startTransients(s: GriddedSegment, h: number, joint: Joint, countRad: number): Uint8Array {
  const n = s.n;
  const pv = s.plan.qd[joint];
  const q = s.q[joint];
  const out = new Uint8Array(n);
  for (let k = 1; k < n; k++) {
    if (!(pv[k - 1] === 0 && pv[k] !== 0)) continue;
    const dir = Math.sign(pv[k]!);
    let l = k;
    while (l < n && dir * (q[l]! - q[k]!) < START_COUNTS * countRad) l++;
    const end = Math.min(n, l + Math.round(SETTLE_S / h));
    for (let m = k; m < end; m++) out[m] = 1;
  }
  return out;
}

/** The window of the rattle's torque RMS [s], and how many times the sweep's median it takes to call a row rattling. */
const RATTLE_WINDOW_S = 0.1;
const RATTLE_FACTOR = 2;

/**
 * Per grid point, 1 where the loop rattles through the play: the duty's torque above the fit's
 * band (less its own low-pass) has an RMS over RATTLE_WINDOW_S above RATTLE_FACTOR times its median
 * over the sweep's moving rows. Near hanging the gravity that keeps the link on one flank is small;
 * with the link out of contact the motor alone is 5-10x lighter than the arm the gains were made for,
 * and the loop can ring between the flanks (on joint 1 of the flawed mock, at 25 Hz with the torque
 * swinging +-0.5 N m, in the fast passes out of hanging). The gap is then neither flank, as the
 * equations assume: those rows moved joint 1's play by up to 0.5 deg between noise seeds.
 */
function rattling(tau: Float64Array, smooth: Float64Array, moving: (k: number) => boolean, h: number): Uint8Array {
  const n = tau.length;
  const w = Math.max(1, Math.round(RATTLE_WINDOW_S / h));
  const sq = new Float64Array(n + 1);
  for (let k = 0; k < n; k++) sq[k + 1] = sq[k]! + (tau[k]! - smooth[k]!) ** 2;
  const rms = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const a = Math.max(0, k - (w >> 1));
    const b = Math.min(n, a + w);
    rms[k] = Math.sqrt((sq[b]! - sq[a]!) / (b - a));
  }
  const ref = median(Array.from(rms).filter((_, k) => moving(k)));
  const out = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (rms[k]! > RATTLE_FACTOR * ref) out[k] = 1;
  return out;
}

/**
 * The link-side angles the gravity acts at, as far as the sweep knows them: the swept joint at its
 * encoder (its play is what the fit finds), the other joint's link off its motor-side encoder by half
 * its play, to the side gravity presses it (while joint 2 is swept, link 1 rests on one flank; while
 * joint 1 is swept, link 2 crosses from one to the other as joint 1 does).
 */
function linkSide(model: ActuatedArmModel, joint: Joint, q: [number, number], half: number): [number, number] {
  if (half === 0) return q;
  const other = joint === 0 ? 1 : 0;
  const g = computeGravity(model, createActuatedArmData(model), q)[other]!;
  const out: [number, number] = [q[0], q[1]];
  out[other] -= Math.sign(g) * half;
  return out;
}

/** Collects one segment's equations (filtered: parallel filtering, as src/identify/fit.ts) and its starts from rest at the centre. */
function segmentEquations(
  model: ActuatedArmModel,
  s: GriddedSegment,
  h: number,
  joint: Joint,
  o: EquationOptions,
  eq: SweepEquations,
  starts: Start[],
): void {
  const fs = 1 / h;
  const lowpass = (x: ArrayLike<number>): Float64Array => zeroPhaseLowpass(x, o.cutoffHz, fs, 4);
  const edge = Math.ceil((3 * fs) / o.cutoffHz);
  const reach = Math.ceil((0.5 * fs) / o.cutoffHz);
  const decim = Math.max(1, Math.floor(fs / (4 * o.cutoffHz)));
  const n = s.n;
  const pv = s.plan.qd[joint];
  // starts from rest where gravity loads neither flank (the centre): the plan leaves a rest
  for (let k = 1; k < n; k++) {
    if (!(pv[k - 1] === 0 && pv[k] !== 0)) continue;
    const q = [s.q[0][k]!, s.q[1][k]!];
    if (Math.abs(gravityShape(model, joint, q).G) >= o.bandNm) continue;
    const end = Math.min(n, k + Math.round(0.6 / h));
    const from = Math.max(0, k - Math.round(0.05 / h));
    let rest = 0;
    for (let l = from; l <= k; l++) rest += s.q[joint][l]! / (k - from + 1);
    const tau: number[] = [];
    const qs: number[] = [];
    for (let l = k; l < end; l++) {
      tau.push(motorTorque(model, joint, s.duty[joint][l]!, 0));
      qs.push(s.q[joint][l]!);
    }
    starts.push({ dir: Math.sign(pv[k]!), h, tau, q: qs, rest });
  }
  if (n <= 2 * edge + 4 * decim) return;
  const qf = [lowpass(s.q[0]), lowpass(s.q[1])];
  const dv = derivatives(qf[joint]!, h);
  const transient = startTransients(s, h, joint, o.countRad);
  const tau = new Float64Array(n);
  const cols = Array.from({ length: 6 }, () => new Float64Array(n));
  const G = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const g = gravityShape(model, joint, linkSide(model, joint, [qf[0]![k]!, qf[1]![k]!], o.otherHalfPlay));
    G[k] = g.G;
    const v = dv.d1[k]!;
    tau[k] = motorTorque(model, joint, s.duty[joint][k]!, v);
    cols[0]![k] = g.G;
    cols[1]![k] = Math.sign(g.G) * g.dG;
    cols[2]![k] = dv.d2[k]!;
    cols[3]![k] = pv[k]! > 0 ? 1 : 0;
    cols[4]![k] = pv[k]! < 0 ? -1 : 0;
    cols[5]![k] = v;
  }
  const minSpeed = o.minSpeedDegS * DEG;
  const colsF = cols.map(lowpass);
  const tauF = lowpass(tau);
  const rattle = rattling(tau, tauF, (k) => pv[k] !== 0, h);
  const skip = widened((k) => Math.abs(pv[k]!) < minSpeed || Math.abs(G[k]!) < o.bandNm || transient[k] === 1 || rattle[k] === 1, n, reach);
  for (let k = edge; k < n - edge; k += decim) {
    if (skip[k]) continue;
    eq.A.push(colsF.map((c) => c[k]!));
    eq.b.push(tauF[k]!);
  }
}

/**
 * The breakaway per direction: at each start from rest at the centre (no load: gravity presses
 * neither flank), the peak torque before the joint let go. When it let go is put back from when it
 * passed 2 and 4 encoder counts (a constant acceleration from rest: t ~ sqrt(distance)), so that the
 * torque the loop kept adding while the encoder had not yet seen the motion does not count.
 */
/**
 * The corner of the low-pass on the torque before a start [Hz]. The loop's torque dithers with the
 * encoder's noise (a count's flicker through the derivative gain), and the plant lets go at the first
 * peak above the breakaway: the low-pass reads the peaks low by what it takes off them. With the
 * sweeps' derivative gain capped (src/identify/flaws.ts sweepRig: 2.42 -> 0.94 on joint 1 of the
 * flawed mock) its share of the dither is 2.6x smaller. Over plant.seed 1-8 (virtual time), 60, 80 and 100 Hz read joint 1's breakaway
 * within 15 % in 14, 15 and 15 of the 16 (seed, direction) pairs (-25, -21, -18 % the worst, all seed
 * 5 cw) and joint 2's in 15, 16 and 16; 100 Hz was chosen on seeds 1-4 (40 and 150 Hz there: 8 and 7
 * of 8 on joint 1: 150 Hz read +17 %, the dither's single samples).
 */
const BREAK_HZ = 100;

function breakaways(starts: readonly Start[], countRad: number): { nm: [number, number]; starts: [number, number] } {
  const per: [number[], number[]] = [[], []];
  for (const st of starts) {
    const past = (c: number): number => st.q.findIndex((q) => st.dir * (q - st.rest) > c * countRad);
    const k2 = past(2);
    const k4 = past(4);
    if (k2 < 0 || k4 < 0) continue;
    const ks = Math.max(0, Math.floor((k4 - Math.SQRT2 * k2) / (1 - Math.SQRT2)));
    // The loop's torque dithers (encoder noise through the gains); a spike of a sample or two
    // does not start the joint, what it holds for a while does: the torque low-passed at BREAK_HZ.
    const tau = zeroPhaseLowpass(st.tau, BREAK_HZ, 1 / st.h, 2);
    let peak = -Infinity;
    for (let l = 0; l <= Math.min(ks, tau.length - 1); l++) peak = Math.max(peak, st.dir * tau[l]!);
    if (Number.isFinite(peak)) per[st.dir > 0 ? 0 : 1].push(peak);
  }
  return { nm: [median(per[0]), median(per[1])], starts: [per[0].length, per[1].length] };
}

/** How to analyse a sweep besides how it was run. */
export interface SweepAnalysisOptions extends SweepOptions {
  commandLag?: number;
  cutoffHz?: number;
  /** The other joint's play [deg] (measured by its own sweep, or declared), which puts its link off its motor-side encoder. @default 0 */
  otherPlayDeg?: number;
}

/** Analyses joint `joint`'s sweep (the ticks of a run of sweepPath). Throws a SweepError when too little of it is usable. */
export function analyseSweep(rig: Rig, ticks: readonly FitTick[], joint: number, o: SweepAnalysisOptions = {}): SweepFigures {
  const model = createActuatedArmModel({ ...rig, friction: { viscous: [0, 0], coulomb: [0, 0] } });
  const bandDeg = o.bandDeg ?? 5;
  const bandNm = Math.abs(gravityShape(model, joint, sweepCentre(rig, joint, o)).dG) * bandDeg * DEG;
  const { h, segments } = griddedSegments(ticks, o.commandLag ?? 1);
  const eq: SweepEquations = { A: [], b: [] };
  const starts: Start[] = [];
  const countRad = (2 * Math.PI) / rig.encoders[joint]!.countsPerRev;
  const opts: EquationOptions = {
    bandDeg,
    minSpeedDegS: o.minSpeedDegS ?? 4,
    cutoffHz: o.cutoffHz ?? 5,
    bandNm,
    countRad,
    otherHalfPlay: ((o.otherPlayDeg ?? 0) * DEG) / 2,
  };
  for (const s of segments) segmentEquations(model, s, h, joint as Joint, opts, eq, starts);
  if (eq.b.length < 30 || !eq.A.some((r) => r[3]! > 0.99) || !eq.A.some((r) => r[4]! < -0.99)) {
    throw new SweepError(
      `joint ${joint + 1}: only ${eq.b.length} usable samples of the sweep (moving both ways, away from hanging): nothing to fit`,
    );
  }
  const { x, cov, rms } = lsq(eq.A, eq.b);
  const [k, c, inertia, fp, fn, fv] = x as [number, number, number, number, number, number];
  const b = breakaways(starts, countRad);
  return {
    joint,
    playDeg: (-2 * c) / k / DEG,
    playStdDeg: (2 * Math.sqrt(Math.max(0, cov[1]![1]!))) / Math.abs(k) / DEG,
    coulombNm: [fp, fn],
    viscousNms: fv,
    breakawayNm: b.nm,
    starts: b.starts,
    gravityScale: k,
    inertia,
    residualRmsNm: rms,
    rows: eq.b.length,
  };
}
