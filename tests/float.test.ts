// Float mode (src/control/float.ts) in the real loop against the mock rig, in virtual time: the arm
// stays where it is left at poses across the workspace, entering and leaving float moves nothing, each
// safety limit holds, and an e-stop zeroes the motors without calling the law.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { FloatLaw, floatSettings, type FloatSettings } from '../src/control/float.js';
import type { PathSpec } from '../src/model/builtins.js';
import { virtualRun, type VirtualRun } from '../src/run/virtual.js';
import { F } from '../src/telemetry/tick.js';
import { expectSpeedCapHeld } from './helpers/float-speed.js';
import type { Injection } from '../src/mock/injections.js';
import type { LoopCore } from '../src/control/loop.js';
import type { Plant } from '../src/mock/plant.js';
import { endpoint } from '../src/model/kinematics.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm-identified.json');
const DEG = Math.PI / 180;

/** Track to `pose` [deg], then float from `floatAt` [s of the held pose]; `then` acts per tick on the law. */
interface FloatRun {
  run: VirtualRun;
  law: FloatLaw;
  floatStart: number;
  /** The plant's true angles [rad] and speeds [rad/s] at each tick: [t, q1, q2, qd1, qd2]. */
  truth: number[][];
}
async function floatAt(
  pose: [number, number],
  o: {
    settings?: Partial<FloatSettings>;
    floatAt?: number;
    holdS?: number;
    then?: (law: FloatLaw, tHold: number, core: LoopCore, plant: Plant) => void;
    injections?: Injection[];
  } = {},
): Promise<FloatRun> {
  const truth: number[][] = [];
  const law = new FloatLaw(rig, floatSettings(rig, { startFloating: false, ...o.settings }));
  const path: PathSpec = {
    name: 'pose',
    description: 'a pose',
    start: { q: [pose[0] * DEG, pose[1] * DEG] },
    steps: [{ kind: 'hold', duration: o.holdS ?? 5 }],
  };
  let floatStart = -1;
  const run = await virtualRun(rig, [path], {
    controller: law,
    park: false,
    maxSeconds: 60,
    ...(o.injections ? { injections: o.injections } : {}),
    onTick: (core, _clock, mock) => {
      truth.push([core.row[F.t]!, ...mock.plant.q, ...mock.plant.qd]);
      const p = core.progress;
      if (!p || p.phase !== 'track') return;
      const tHold = p.t - (p.duration - (o.holdS ?? 5));
      if (floatStart < 0 && tHold >= (o.floatAt ?? 0.5)) {
        law.setFloat(true);
        floatStart = core.row[F.t]!;
      }
      o.then?.(law, tHold, core, mock.plant);
    },
  });
  expectSpeedCapHeld(run.rows, law); // every float run: no joint above its speed cap + 10 %
  return { run, law, floatStart, truth };
}

/** Rows with loop time in [t0, t1]. */
const between = (r: VirtualRun, t0: number, t1: number): Float64Array[] => r.rows.filter((row) => row[F.t]! >= t0 && row[F.t]! <= t1);
/** Largest move of each joint over rows from the first [deg]. */
function drift(rows: Float64Array[]): [number, number] {
  const q0 = [rows[0]![F.q0]!, rows[0]![F.q1]!];
  const d: [number, number] = [0, 0];
  for (const row of rows) {
    d[0] = Math.max(d[0], Math.abs(row[F.q0]! - q0[0]!) / DEG);
    d[1] = Math.max(d[1], Math.abs(row[F.q1]! - q0[1]!) / DEG);
  }
  return d;
}

/** 20 poses across the workspace, inside the soft limits [deg]. */
export const FLOAT_POSES: [number, number][] = [];
for (const a1 of [-120, -60, 0, 60, 120]) for (const a2 of [-120, -40, 40, 120]) FLOAT_POSES.push([a1, a2]);

describe('float, hands off', () => {
  it(
    'stays within 0.5 deg per joint for 2 s at 20 poses',
    async () => {
      const worst: [number, number] = [0, 0];
      for (const pose of FLOAT_POSES) {
        const { run, floatStart } = await floatAt(pose, { holdS: 4 });
        expect(run.summary.stop).toEqual({ kind: 'done' });
        // after the blend (0.5 s): 2 s of hands-off float
        const d = drift(between(run, floatStart + 0.5, floatStart + 2.5));
        worst[0] = Math.max(worst[0], d[0]);
        worst[1] = Math.max(worst[1], d[1]);
        expect(d[0], `pose ${pose.join(',')}`).toBeLessThanOrEqual(0.5);
        expect(d[1], `pose ${pose.join(',')}`).toBeLessThanOrEqual(0.5);
      }
      console.log(`float drift, worst of 20 poses over 2 s [deg] (virtual time): ${worst.map((v) => v.toFixed(4)).join(', ')}`);
    },
    hangGuardMs(60_000),
  );
});

/** The plant's largest move from its angle at `t0` over [t0, t1] [deg]. */
function trueMove(truth: number[][], t0: number, t1: number): [number, number] {
  const at = truth.find((x) => x[0]! >= t0)!;
  const d: [number, number] = [0, 0];
  for (const x of truth) {
    if (x[0]! < t0 || x[0]! > t1) continue;
    d[0] = Math.max(d[0], Math.abs(x[1]! - at[1]!) / DEG);
    d[1] = Math.max(d[1], Math.abs(x[2]! - at[2]!) / DEG);
  }
  return d;
}

describe('entering and leaving float', () => {
  it(
    'moves the arm at most 0.2 deg (the plant, not the encoders)',
    async () => {
      let left = -1;
      let back = -1;
      const r = await floatAt([30, 60], {
        holdS: 6,
        then: (law, tHold, core) => {
          if (left < 0 && tHold >= 2.5) {
            law.setFloat(false);
            left = core.row[F.t]!;
          }
          if (back < 0 && tHold >= 4.5) {
            law.setFloat(true);
            back = core.row[F.t]!;
          }
        },
      });
      expect(r.run.summary.stop).toEqual({ kind: 'done' });
      const enter = trueMove(r.truth, r.floatStart, r.floatStart + 1.5);
      const leave = trueMove(r.truth, left, left + 1.5);
      const again = trueMove(r.truth, back, back + 1.5);
      console.log(
        `float transient [deg] (virtual time, the plant's angles): enter ${enter.map((v) => v.toFixed(4)).join(',')}, leave ${leave.map((v) => v.toFixed(4)).join(',')}, enter again ${again.map((v) => v.toFixed(4)).join(',')}`,
      );
      for (const d of [enter, leave, again]) for (const v of d) expect(v).toBeLessThanOrEqual(0.2);
      expect(r.law.state.phase).toBe('float');
    },
    hangGuardMs(10_000),
  );
});

/** A run at `pose` that floats from 0.5 s and has joint torques `push` [N m] on it from 1.5 s. */
const pushed = (pose: [number, number], push: [number, number], settings: Partial<FloatSettings>, holdS = 3): Promise<FloatRun> =>
  floatAt(pose, {
    settings,
    holdS,
    then: (_law, tHold, _core, plant) => {
      if (tHold >= 1.5) for (let i = 0; i < 2; i++) plant.injected.extraTorque[i] = push[i]!;
    },
  });

describe('float safety limits', () => {
  it(
    'the torque cap bounds every command in float below the speed cap (the arm sinks rather than exceed it; braking above the cap may use the full limit)',
    async () => {
      const cap = [1, 0.5];
      const r = await floatAt([0, 0], { settings: { torqueCapNm: cap }, holdS: 3, floatAt: 0.5 });
      const speedCap = r.law.settings.speedCapRadS;
      // once blended in (0.5 s)
      const floating = between(r.run, r.floatStart + 0.52, r.floatStart + 2);
      expect(floating.length).toBeGreaterThan(100);
      let braked = 0;
      for (const row of floating) {
        for (const [i, tau, qd] of [
          [0, F.tauCmd0, F.qd0],
          [1, F.tauCmd1, F.qd1],
        ] as const) {
          expect(Math.abs(row[tau]!)).toBeLessThanOrEqual(rig.limits[i]!.maxTorque + 1e-9);
          if (Math.abs(row[qd]!) < 0.8 * speedCap[i]!) expect(Math.abs(row[tau]!)).toBeLessThanOrEqual(cap[i]! + 1e-9);
          else braked++;
        }
      }
      // gravity at the horizontal arm is ~2.7 N m on joint 1: capped at 1 N m, it sinks (the speed cap brakes the fall)
      expect(r.truth.at(-1)![1]! / DEG).toBeLessThan(-20);
      console.log(
        `torque cap: joint 1 held with 1 N m sinks to ${(r.truth.at(-1)![1]! / DEG).toFixed(0)} deg; ${braked} joint-samples braked by the speed cap (virtual time)`,
      );
    },
    hangGuardMs(10_000),
  );

  it(
    'the speed cap injects damping: a steady push leaves no joint above its cap + 10 % (270 deg/s on joint 2 by default)',
    async () => {
      const capped = await pushed([0, -60], [0, 0.4], {});
      const free = await pushed([0, -60], [0, 0.4], { speedCapRadS: [100, 100] });
      // the defaults as documented: half the speed limit, the joint's full torque limit at 25 % over it
      expect(capped.law.settings.speedCapRadS[1]! / DEG).toBeCloseTo(270, 9);
      expect(capped.law.settings.speedDamping[1]).toBeCloseTo(rig.limits[1]!.maxTorque / (0.25 * 270 * DEG), 9);
      // while the float holds (the hold ends 2.5 s after the float began; then the motors let go)
      const peak = (r: FloatRun): number => Math.max(...r.truth.filter((x) => x[0]! < r.floatStart + 2.4).map((x) => Math.abs(x[4]!)));
      console.log(
        `speed cap: joint 2 under a 0.4 N m push peaks at ${(peak(capped) / DEG).toFixed(0)} deg/s (the plant) with the 270 deg/s cap, ${(peak(free) / DEG).toFixed(0)} deg/s without (virtual time)`,
      );
      expect(capped.run.summary.stop).toEqual({ kind: 'done' });
      expect(peak(free)).toBeGreaterThan(1.3 * 270 * DEG);
      expect(peak(capped)).toBeLessThanOrEqual(1.1 * 270 * DEG);
    },
    hangGuardMs(20_000),
  );

  it(
    'the barrier stops a joint pushed toward its soft limit before the limit',
    async () => {
      const lim = rig.limits[1]!.max / DEG;
      const r = await pushed([0, 100], [0, 0.6], {});
      expect(r.run.summary.stop).toEqual({ kind: 'done' });
      const top = Math.max(...r.truth.map((x) => x[2]!)) / DEG;
      console.log(`barrier: joint 2 pushed with 0.6 N m toward its ${lim} deg limit stops at ${top.toFixed(1)} deg (virtual time)`);
      expect(top).toBeLessThan(lim);
      expect(top).toBeGreaterThan(lim - 10); // it did get into the barrier
    },
    hangGuardMs(20_000),
  );
});

describe('float constraints', () => {
  it(
    'a locked joint stays while the other moves under a push',
    async () => {
      const r = await pushed([20, 40], [0.3, 0.2], { lock: 0 }, 3);
      const move = trueMove(r.truth, r.floatStart + 0.5, r.floatStart + 2.4);
      const last = r.truth.filter((x) => x[0]! < r.floatStart + 2.4).at(-1)!;
      const at = r.truth.find((x) => x[0]! >= r.floatStart + 0.5)!;
      console.log(
        `lock: joint 1 moved at most ${move[0].toFixed(2)} deg under a 0.3 N m push, ${(Math.abs(last[1]! - at[1]!) / DEG).toFixed(3)} deg at the end; joint 2 moved ${move[1].toFixed(0)} deg (virtual time)`,
      );
      expect(move[0]).toBeLessThan(1);
      expect(Math.abs(last[1]! - at[1]!) / DEG).toBeLessThan(0.2);
      expect(move[1]).toBeGreaterThan(5);
    },
    hangGuardMs(20_000),
  );

  it(
    'the endpoint kept on a line moves along it under a push',
    async () => {
      const arm = rig.arm as TwoLinkParams;
      const p0 = endpoint(arm, [20 * DEG, 60 * DEG]);
      const line = { kind: 'line' as const, from: [p0[0], p0[1]] as [number, number], to: [p0[0] + 0.1, p0[1] - 0.1] as [number, number] };
      const r = await pushed([20, 60], [0.3, 0], { constraint: line }, 3);
      let off = 0;
      let along = 0;
      const n = [Math.SQRT1_2, Math.SQRT1_2];
      for (const x of r.truth) {
        if (x[0]! < r.floatStart + 0.5) continue;
        const p = endpoint(arm, [x[1]!, x[2]!]);
        off = Math.max(off, Math.abs((p[0] - p0[0]) * n[0]! + (p[1] - p0[1]) * n[1]!));
        along = Math.max(along, Math.hypot(p[0] - p0[0], p[1] - p0[1]));
      }
      console.log(
        `line constraint: endpoint off the line at most ${(off * 1000).toFixed(2)} mm while it moved ${(along * 1000).toFixed(0)} mm (virtual time)`,
      );
      expect(along).toBeGreaterThan(0.02);
      expect(off).toBeLessThan(0.005);
    },
    hangGuardMs(20_000),
  );
});

describe('e-stop in float', () => {
  it(
    'zeroes the motors without calling the law',
    async () => {
      let stepsAtStop = -1;
      const r = await floatAt([30, 60], {
        holdS: 4,
        then: (law, tHold, core) => {
          if (stepsAtStop < 0 && tHold >= 1.5) {
            stepsAtStop = law.steps;
            core.command({ kind: 'estop' });
          }
        },
      });
      expect(r.run.summary.stop.kind).toBe('estop');
      expect(r.law.steps).toBe(stepsAtStop);
      const after = r.run.rows.filter((row) => row[F.state] === 6);
      expect(after.length).toBeGreaterThan(0);
      for (const row of after) {
        expect(row[F.duty0]).toBe(0);
        expect(row[F.duty1]).toBe(0);
      }
    },
    hangGuardMs(10_000),
  );
});

describe('the end of float', () => {
  it(
    'home() takes the arm back to where the run began and holds it there',
    async () => {
      let asked = -1;
      const r = await floatAt([0, 60], {
        holdS: 8,
        then: (law, tHold, core, plant) => {
          // pushed away while floating, let go, then sent home
          plant.injected.extraTorque[1] = tHold >= 1 && tHold < 1.4 ? 0.3 : 0;
          if (asked < 0 && tHold >= 3) {
            law.home();
            asked = core.row[F.t]!;
          }
        },
      });
      expect(r.run.summary.stop).toEqual({ kind: 'done' });
      expect(r.law.atHome).toBe(true);
      const before = r.truth.find((x) => x[0]! >= asked)!;
      const end = r.truth.filter((x) => x[0]! < asked + 4).at(-1)!;
      // it had been pushed away from where float began (the run began hanging: [-90, 0] deg)
      expect(Math.abs(before[2]! - 60 * DEG)).toBeGreaterThan(5 * DEG);
      expect(Math.abs(end[1]! + 90 * DEG) / DEG).toBeLessThan(0.5);
      expect(Math.abs(end[2]!) / DEG).toBeLessThan(0.5);
    },
    hangGuardMs(10_000),
  );
});
