/**
 * The speed test on the board (motor-constant.ts says what it measures and why): joint j servoed
 * along slow ramps through a window about where it hangs, back and forth at several speeds, the
 * other joint held where it is by its own motor. Each sample is answered with duties on the board's
 * outputs as the motors were found wired; what the board applied (the command its sample
 * acknowledges) is recorded with the motion that followed. Ends at once, motors to zero, when a joint
 * strays from its reference or moves too fast.
 */
import type { Rig } from '../config/load.js';
import { computeGravity, createActuatedArmData, createRigidArmModel } from '../model/actuated.js';
import { countsToAngle } from '../transport/joints.js';
import type { Link, Reading } from '../transport/link.js';
import { servoDuty, servoGains, speedPlan, type SpeedEvidence } from './motor-constant.js';
import type { Findings } from './steps.js';

/** Something that hands each sample to a hook (the driver's sample stream). */
export interface SampleHook {
  hook: ((r: Reading) => void) | undefined;
}

/** Joint angles [rad] from the raw counts (board order), with the encoders and inputs as found so far (the joint layer's units, transport/joints.ts). */
export function jointAngles(raw: readonly number[], f: Findings, out: number[]): number[] {
  for (let j = 0; j < out.length; j++)
    out[j] = countsToAngle(
      { countsPerRev: f.countsPerRev[j]!, sign: f.encoderSign[j]!, zero: (f.zeroDeg[j]! * Math.PI) / 180 },
      raw[f.encoderInput[j]!]!,
    );
  return out;
}

/** Bounds of the test's motion. */
export interface SpeedTestLimits {
  /** Largest duty on any output (fraction of the supply). */
  maxDuty: number;
  /** The test ends when a joint moves faster than this [deg/s] ... */
  maxSpeedDegS: number;
  /** ... or strays this far from its reference [deg]. */
  maxErrorDeg: number;
}

const DEG = Math.PI / 180;
/** Speed of the move to the window's start [rad/s]. */
const APPROACH_RAD_S = 12 * DEG;
/** Speed estimate over this window [s] (one count of noise between two samples would be a large speed). */
const SPEED_WINDOW_S = 0.04;

interface Segment {
  from: number;
  to: number;
  speed: number;
  pass: number;
}

/** Smooth start and stop of each move [s], the wait at its end [s], and the time after the start before the speed counts as steady [s]. */
const RAMP_S = 0.2;
const DWELL_S = 0.25;
const STEADY_AFTER_S = 0.2;

/**
 * The reference along a segment at `tIn` [s] from its start: the speed rises and falls as a half
 * cosine over RAMP_S (each covering speed * RAMP_S / 2), cruises between, then waits DWELL_S.
 * `steady` is the cruise after STEADY_AFTER_S; `done` once the wait is over.
 */
export function reference(s: Segment, tIn: number): { q: number; w: number; acc: number; steady: boolean; done: boolean } {
  const dir = Math.sign(s.to - s.from);
  const D = Math.abs(s.to - s.from);
  const cruise = Math.max(0, D / s.speed - RAMP_S);
  const end = 2 * RAMP_S + cruise;
  const v = s.speed;
  let x: number;
  let w: number;
  let acc = 0;
  if (tIn < RAMP_S) {
    w = (v * (1 - Math.cos((Math.PI * tIn) / RAMP_S))) / 2;
    acc = ((v * Math.PI) / (2 * RAMP_S)) * Math.sin((Math.PI * tIn) / RAMP_S);
    x = (v / 2) * (tIn - (RAMP_S / Math.PI) * Math.sin((Math.PI * tIn) / RAMP_S));
  } else if (tIn < RAMP_S + cruise) {
    w = v;
    x = (v * RAMP_S) / 2 + v * (tIn - RAMP_S);
  } else if (tIn < end) {
    const u = tIn - RAMP_S - cruise;
    w = (v * (1 + Math.cos((Math.PI * u) / RAMP_S))) / 2;
    acc = -((v * Math.PI) / (2 * RAMP_S)) * Math.sin((Math.PI * u) / RAMP_S);
    x = (v * RAMP_S) / 2 + v * cruise + (v / 2) * (u + (RAMP_S / Math.PI) * Math.sin((Math.PI * u) / RAMP_S));
  } else {
    w = 0;
    x = D;
  }
  return {
    q: s.from + dir * Math.min(x, D),
    w: dir * w,
    acc: dir * acc,
    steady: tIn >= RAMP_S + STEADY_AFTER_S && tIn < RAMP_S + cruise,
    done: tIn >= end + DWELL_S,
  };
}

/** The interval that ended at `t` with joint j at `qj` into the evidence, with the duty `d` the board applied at its start. */
function pushInterval(
  ev: SpeedEvidence,
  prev: { t: number; q: number; pass: number; tIn: number; clamped: boolean; refW: number },
  qj: number,
  t: number,
  d: number[] | undefined,
  f: Findings,
  j: number,
): void {
  // An interval whose duty was clamped is not steady (the joint decelerates): out of the estimate.
  ev.pass.push(prev.clamped ? -1 : prev.pass);
  ev.tInPass.push(prev.tIn);
  ev.q.push(prev.q);
  ev.refW.push(prev.refW);
  ev.dq.push(qj - prev.q);
  ev.dt.push(t - prev.t);
  ev.duty.push(d ? f.motorSign[j]! * d[f.motorOutput[j]!]! : 0);
}

/** The joint's speed over the last SPEED_WINDOW_S of readings `hist` (this one, at `t`, added) [rad/s]. */
function windowSpeed(hist: { t: number; q: number[] }[], t: number, q: number[]): number[] {
  hist.push({ t, q });
  while (hist.length > 2 && t - hist[1]!.t >= SPEED_WINDOW_S) hist.shift();
  const span = t - hist[0]!.t;
  return q.map((x, i) => (span > 0 ? (x - hist[0]!.q[i]!) / span : 0));
}

/** The test's segments for joint `j` from `q0` [rad]: the approach to the first pass, then the passes. */
function speedSegments(j: number, q0: number): Segment[] {
  const plan = speedPlan(j, q0);
  return [
    { from: q0, to: plan.passes[0]!.fromRad, speed: APPROACH_RAD_S, pass: -1 },
    ...plan.passes.map((p, i) => ({ from: p.fromRad, to: p.toRad, speed: p.speedRadS, pass: i })),
  ];
}

/** Why the test stops: a joint `err` [rad] from its reference or moving at `w` [rad/s] beyond the limits; null within them. */
function outOfBounds(err: readonly number[], w: readonly number[], limits: SpeedTestLimits): string | null {
  const worst = Math.max(...err.map((e) => Math.abs(e) / DEG));
  const fast = Math.max(...w.map((x) => Math.abs(x) / DEG));
  if (worst > limits.maxErrorDeg) return `a joint strayed ${Math.round(worst)} deg from its reference`;
  if (fast > limits.maxSpeedDegS) return `a joint moved at ${Math.round(fast)} deg/s`;
  return null;
}

/** Joint duties, clamped to `maxDuty`, into the board's outputs `out` (the wiring found, `f`); the peak kept in `ev`. True when one was clamped. */
function toOutputs(jointDuty: readonly number[], maxDuty: number, f: Findings, ev: SpeedEvidence, out: number[]): boolean {
  out.fill(0);
  let clamped = false;
  for (let i = 0; i < jointDuty.length; i++) {
    const d = Math.max(-maxDuty, Math.min(maxDuty, jointDuty[i]!));
    if (d !== jointDuty[i]) clamped = true;
    ev.peakDuty = Math.max(ev.peakDuty, Math.abs(d));
    out[f.motorOutput[i]!] = f.motorSign[i]! * d;
  }
  return clamped;
}

/** Runs joint `j`'s speed test; resolves with the evidence (the caller zeroes the motors after). */
export function speedTest(
  link: Link,
  samples: SampleHook,
  rig: Rig,
  f: Findings,
  j: number,
  limits: SpeedTestLimits,
): Promise<SpeedEvidence> {
  const n = rig.joints;
  const arm = createRigidArmModel(rig.arm);
  const armData = createActuatedArmData(arm);
  const gains = servoGains(rig, n === 2 ? [-Math.PI / 2, 0] : [-Math.PI / 2]);
  const ev: SpeedEvidence = { joint: j, pass: [], tInPass: [], q: [], refW: [], dq: [], dt: [], duty: [], peakDuty: 0, aborted: null };
  const sent = new Map<number, number[]>();
  const hist: { t: number; q: number[] }[] = [];
  const out = new Array<number>(n).fill(0);
  const zeros = new Array<number>(n).fill(0);
  let segs: Segment[] | undefined;
  let hold: number[] = [];
  let seg = 0;
  let segT0 = 0;
  let prev: { t: number; q: number; ack: number | null; pass: number; tIn: number; clamped: boolean; refW: number } | undefined;
  return new Promise((resolve) => {
    const finish = (why: string | null): void => {
      link.writeDuty(zeros);
      samples.hook = undefined;
      ev.aborted = why;
      resolve(ev);
    };
    samples.hook = (r) => {
      const t = r.boardTime;
      const q = jointAngles(r.raw, f, new Array<number>(n).fill(0));
      const w = windowSpeed(hist, t, q);
      if (!segs) {
        segs = speedSegments(j, q[j]!);
        hold = q.slice();
        segT0 = t;
      }
      // The interval since the last sample, with the duty the board applied at its start.
      if (prev) pushInterval(ev, prev, q[j]!, t, prev.ack !== null ? sent.get(prev.ack) : undefined, f, j);
      let s = segs[seg]!;
      let tIn = t - segT0;
      let ref = reference(s, tIn);
      if (ref.done) {
        if (++seg >= segs.length) return finish(null);
        segT0 = t;
        tIn = 0;
        s = segs[seg]!;
        ref = reference(s, 0);
      }
      const qRef = ref.q;
      const G = computeGravity(arm, armData, q);
      const jointDuty = q.map((x, i) =>
        i === j
          ? servoDuty(gains, i, G[i]! + gains.inertia[i]! * ref.acc, qRef, ref.w, x, w[i]!)
          : servoDuty(gains, i, G[i]!, hold[i]!, 0, x, w[i]!),
      );
      const strayed = outOfBounds(
        q.map((x, i) => (i === j ? qRef : hold[i]!) - x),
        w,
        limits,
      );
      if (strayed) return finish(strayed);
      const clamped = toOutputs(jointDuty, limits.maxDuty, f, ev, out);
      // The board applies per-mille duties: remember what it will apply.
      const id = link.writeDuty(out);
      const applied = out.map((d) => Math.round(d * 1000) / 1000);
      sent.set(id, applied);
      if (sent.size > 64) sent.delete(sent.keys().next().value!);
      prev = { t, q: q[j]!, ack: r.ack, pass: ref.steady ? s.pass : -1, tIn, clamped, refW: ref.w };
    };
  });
}
