// Control that lives with play and stiction (issue 33.3), on the mock with the flaws of hobby arms
// (h5's plant: gearbox play at the output with the encoder on the motor side, Stribeck stiction, the
// H-bridge): the reach is done with the LINK (the plant's true angle) on its plan and the duty calm.
// Virtual time: the figures are the plant's, not the machine's.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseRigFile } from '../src/config/rig.js';
import { resolveRig, type Rig } from '../src/config/load.js';
import { hardwareRig } from '../src/bench/hardware.js';
import { builtinPath } from '../src/model/builtins.js';
import { computeFriction, createActuatedArmData, createActuatedArmModel } from '../src/model/actuated.js';
import { BacklashInverse, BAND_OF_LIMIT, backlashInverseOf } from '../src/control/backlash.js';
import { DisturbanceFeed, FEED_HZ_MIN, FEED_HZ_WITH_PLAY, feedCorners } from '../src/control/disturbance-feed.js';
import { Controller } from '../src/control/controller.js';
import { gapDerivativeCap } from '../src/control/tracking-law.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const DEG = Math.PI / 180;

/**
 * The mock rig with hobby-arm flaws (the bench's, src/bench/hardware.ts): `playDeg` of gearbox play per
 * joint in the plant, breakaway 4x the plant's Coulomb friction, the TB6612 declared (and so modelled in
 * the plant); `declare` writes the play and the friction into what the host believes.
 */
const flawedRig = (playDeg: number, declared: boolean): Rig => hardwareRig({ playDeg, breakawayX: 4, driver: 'tb6612', declared });

/** Realisations of the mock's noise tried (one realisation's figures move a lot with the seed). */
const SEEDS = [0, 1, 2, 3];
/** `rig` with its plant's noise seeded `k` steps from the file's. */
const seeded = (rig: Rig, k: number): Rig => ({ ...rig, plant: { ...rig.plant!, seed: rig.plant!.seed + 7919 * k } });

describe('the reach on the mock with every flaw (virtual time)', () => {
  it(
    '1.5 deg of play, breakaway 4x Coulomb, TB6612, play and friction declared: done, the link within 0.5 deg RMS per joint in every phase, at most 2 duty reversals a second, on 4 noise seeds',
    async () => {
      const rig = flawedRig(1.5, true);
      // The plant really has the flaws, and the host knows the play and the bridge.
      expect(rig.plant!.backlash!.map((b) => b / DEG)).toEqual([1.5, 1.5]);
      expect(rig.plant!.breakaway).toEqual(rig.plant!.coulomb.map((c) => 4 * c));
      expect(rig.plant!.motors.map((m) => m.driver?.preset)).toEqual(['tb6612', 'tb6612']);
      expect(rig.encoders.map((e) => e.backlash! / DEG)).toEqual([1.5, 1.5]);
      for (const k of SEEDS) {
        const r = await virtualRun(seeded(rig, k), [builtinPath(rig.arm, 'reach')!], { keepRows: false });
        const s = r.summary;
        expect(s.stop).toEqual({ kind: 'done' });
        for (const p of ['approach', 'trajectory', 'park'] as const) {
          const ph = s.phases![p]!;
          expect(ph.samples).toBeGreaterThan(300);
          for (const v of ph.link!.rmsDeg) expect(v).toBeLessThan(0.5);
        }
        for (const v of s.reversals!.perS) expect(v).toBeLessThanOrEqual(2);
        expect(r.events.filter((e) => e.kind === 'reversals')).toEqual([]);
        // The motor leads the link across the play: the encoder's error is the motor's lead, more than the link's.
        expect(s.phases!.trajectory!.encoder.rmsDeg[0]).toBeGreaterThan(s.phases!.trajectory!.link!.rmsDeg[0]!);
      }
    },
    hangGuardMs(120_000),
  );

  it(
    '3 deg of play, declared: done, the link within 0.5 deg RMS on the trajectory, at most 2 reversals a second, on 4 noise seeds',
    async () => {
      const rig = flawedRig(3, true);
      for (const k of SEEDS) {
        const r = await virtualRun(seeded(rig, k), [builtinPath(rig.arm, 'reach')!], { keepRows: false });
        expect(r.summary.stop).toEqual({ kind: 'done' });
        for (const v of r.summary.phases!.trajectory!.link!.rmsDeg) expect(v).toBeLessThan(0.5);
        for (const v of r.summary.reversals!.perS) expect(v).toBeLessThanOrEqual(2);
      }
    },
    hangGuardMs(120_000),
  );

  it('1.5 deg of play the host does not know of: it warns that the duty rattles, calms the joints and the reach is done', async () => {
    const rig = flawedRig(1.5, false);
    expect(rig.encoders.every((e) => !e.backlash)).toBe(true);
    const r = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], { keepRows: false });
    expect(r.summary.stop).toEqual({ kind: 'done' });
    const warned = r.events.flatMap((e) => (e.kind === 'reversals' ? e.joints : []));
    expect(new Set(warned)).toEqual(new Set([0, 1]));
    for (const e of r.events) if (e.kind === 'reversals') expect(e.feedHz).toEqual(e.joints.map(() => FEED_HZ_WITH_PLAY));
  });
});

describe('the pieces', () => {
  it('a rig without declared play keeps the law as it was: no feed filter, no backlash inverse, no cap on the derivative gain', () => {
    const rig = resolveRig(parseRigFile(JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')), 'm.json'), 'm.json');
    expect(feedCorners(2, rig.control.disturbanceFeedHz, rig.encoders)).toEqual([Infinity, Infinity]);
    const c = new Controller(rig, 'desired');
    expect(c.law.backlash).toBeUndefined();
    expect(c.pid.map((p) => p.gains.kd)).toEqual(rig.control.pid.kd);
    // With the play declared: the corner, the inverse and the cap.
    const f = flawedRig(1.5, true);
    const cf = new Controller(f, 'desired');
    expect(feedCorners(2, undefined, f.encoders)).toEqual([FEED_HZ_WITH_PLAY, FEED_HZ_WITH_PLAY]);
    expect(cf.law.backlash!.half.map((h) => h / DEG)).toEqual([0.75, 0.75]);
    const model = createActuatedArmModel(f);
    cf.pid.forEach((p, i) => expect(p.gains.kd).toBe(Math.min(f.control.pid.kd[i]!, gapDerivativeCap(model.rotorInertia[i]!))));
  });

  it("the backlash inverse leads the motor by half the play on the side of the links' torque", () => {
    const rig = flawedRig(2, true);
    const inv = backlashInverseOf(rig, 2)!;
    // Both links level (a1 = a2 = 0), at rest: gravity pulls down, the gears push up (positive torque) on both joints.
    inv.update({ q: [0, 0], qd: [0, 0], qdd: [0, 0] }, 0.002);
    expect(inv.linkTorque[0]).toBeGreaterThan(20 * BAND_OF_LIMIT * rig.limits[0]!.maxTorque);
    expect(inv.shift[0]! / DEG).toBeCloseTo(1, 6);
    expect(inv.shift[1]! / DEG).toBeCloseTo(1, 3);
    expect(inv.rate).toEqual([0, 0]);
    // Link 1 pointing down (a1 = -90 deg), link 2 turned up (a2 = -180: pointing up): joint 2 needs no torque at rest.
    inv.update({ q: [-Math.PI / 2, Math.PI], qd: [0, 0], qdd: [0, 0] }, 0.002);
    expect(Math.abs(inv.shift[1]!)).toBeLessThan(0.01 * DEG);
    // The rate is the shift's change over the step.
    expect(inv.rate[1]! * 0.002).toBeCloseTo(inv.shift[1]! - 1 * DEG, 4);
    // A joint without play is never shifted.
    const one = new BacklashInverse(rig.arm, [0, 1 * DEG], [0.1, 0.1]);
    one.update({ q: [0, 0], qd: [0, 0], qdd: [0, 0] }, 0.002);
    expect(one.shift[0]).toBe(0);
  });

  it("the observer's feed: a second-order low-pass at its corner, none without one; a warning lowers it to 6 Hz, then halving to 1.5 Hz", () => {
    const f = new DisturbanceFeed(2, [10, Infinity]);
    f.update([0, 0], 0.002);
    const dt = 0.001;
    let t = 0;
    let out: readonly number[] = [];
    // A unit step: the critically damped pair reaches 1 - (1 + wt) e^-wt.
    while (t < 0.05 - 1e-12) {
      out = f.update([1, 1], dt);
      t += dt;
    }
    const w = 2 * Math.PI * 10 * 0.05;
    expect(out[0]).toBeCloseTo(1 - (1 + w) * Math.exp(-w), 2);
    expect(out[1]).toBe(1);
    expect([f.calm(1), f.calm(1), f.calm(1), f.calm(1)]).toEqual([FEED_HZ_WITH_PLAY, 3, FEED_HZ_MIN, FEED_HZ_MIN]);
    expect(f.calm(0)).toBe(5);
    // After a reset the filters start at the estimate: no transient.
    f.reset();
    expect(f.update([0.7, 0.7], dt)).toEqual([0.7, 0.7]);
  });

  it("Stribeck's curve in the nominal model: the breakaway at rest, the Coulomb level when sliding; without a breakaway the friction is as before", () => {
    const rig = flawedRig(1.5, true);
    const m = createActuatedArmModel(rig);
    const d = createActuatedArmData(m);
    const slow = computeFriction(m, d, [1e-4, -1e-4]).slice();
    const fast = computeFriction(m, d, [1, -1]).slice();
    // tanh(1e-4 / 0.01) = 0.01 of the level at 1e-4 rad/s: the level is the breakaway.
    expect(slow[0]! / Math.tanh(1e-4 / m.coulombVelocity)).toBeCloseTo(4 * rig.friction.coulomb[0]!, 4);
    expect(fast[0]).toBeCloseTo(rig.friction.coulomb[0]!, 9);
    expect(fast[1]).toBeCloseTo(-rig.friction.coulomb[1]!, 9);
    const plain = createActuatedArmModel({ ...rig, friction: { viscous: [0, 0], coulomb: rig.friction.coulomb } });
    const p = computeFriction(plain, createActuatedArmData(plain), [0.003, -0.5]);
    expect(p[0]).toBe(rig.friction.coulomb[0]! * Math.tanh(0.003 / 0.01));
    expect(p[1]).toBe(rig.friction.coulomb[1]! * Math.tanh(-0.5 / 0.01));
  });
});
