// The mock arm as hobby arms are built (issue 33): gearbox play the motor-side encoder cannot see,
// stiction that holds below its breakaway, an H-bridge that drops volts; the plant stays stable and,
// with every flaw off, is the rigid plant bit for bit. The recording carries the link's true angle.
import { describe, expect, it } from 'vitest';
import { loadRig, type PlantParams } from '../src/config/load.js';
import { Plant } from '../src/mock/plant.js';
import { applyInjection, parseInjection } from '../src/mock/injections.js';
import { DRIVER_PRESETS } from '../src/model/driver.js';
import { dutyForTorque, torqueForDuty } from '../src/model/motor.js';
import { virtualRun } from '../src/run/virtual.js';
import { builtinPath } from '../src/model/builtins.js';
import { F } from '../src/telemetry/tick.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const DEG = Math.PI / 180;
const quiet: PlantParams = { ...rig.plant!, noiseCounts: 0 };

/** A noise-free mock plant with `flaws` over the rig's. */
function plant(flaws: Partial<PlantParams> = {}): Plant {
  return new Plant({ ...quiet, ...flaws }, rig.encoders);
}

/** Joint j's angle as its encoder reads it [rad] (the counts, as the host turns them into an angle). */
function encoderAngle(p: Plant, j: number): number {
  const e = rig.encoders[j]!;
  return e.zero + (e.sign * p.counts()[j]! * 2 * Math.PI) / e.countsPerRev;
}

describe('gearbox play at the output, the encoder on the motor shaft', () => {
  it('the encoder moves through the play before the link does, and a reversal costs the whole play', () => {
    // Joint 2 hangs along link 1 (no gravity torque on it); its motor turns it slowly one way, then back.
    const p = plant({ backlash: [0, 3 * DEG] });
    const link0 = p.q[1]!;
    p.setDuty([0, 0.08]);
    p.advance(0.03);
    // The motor side has crossed half the play (it starts in the middle) while the link has not moved.
    const early = encoderAngle(p, 1) - p.q[1]!;
    expect(Math.abs(p.q[1]! - link0)).toBeLessThan(0.05 * DEG);
    expect(early).toBeGreaterThan(0.5 * DEG);
    p.advance(1);
    expect(p.q[1]! - link0).toBeGreaterThan(5 * DEG); // the link follows once the play is taken up
    const forward = encoderAngle(p, 1) - p.q[1]!;
    p.setDuty([0, -0.08]);
    p.advance(2.5);
    expect(p.q[1]!).toBeLessThan(link0); // it came back past where it started
    const backward = encoderAngle(p, 1) - p.q[1]!;
    // Pushing either way, the encoder leads the link by half the play (less the encoder's count of
    // 0.15 deg and the mesh's windup): between the two, the whole 3 deg the encoder cannot see.
    expect((forward - backward) / DEG).toBeGreaterThan(2.7);
    expect((forward - backward) / DEG).toBeLessThan(3.3);
  });

  it('a free fall rattling in the play conserves energy: no friction, no damping, no motor (and no NaN)', () => {
    const p = plant({
      backlash: [3 * DEG, 3 * DEG],
      viscous: [0, 0],
      coulomb: [0, 0],
      gearDamping: [0, 0],
      start: [0, 0],
      stops: undefined,
    });
    p.injected.motorDead.fill(true);
    p.advance(1e-4);
    const e0 = p.mechanicalEnergy();
    let worst = 0;
    let rattle = 0;
    for (let k = 1; k <= 200; k++) {
      p.advance(k * 0.01);
      for (const v of [...p.q, ...p.qd, ...p.encoderQ, ...p.encoderQd]) expect(Number.isFinite(v)).toBe(true);
      worst = Math.max(worst, Math.abs(p.mechanicalEnergy() - e0));
      rattle = Math.max(rattle, Math.abs(p.encoderQ[1]! - p.q[1]!));
    }
    // The arm swung (about 1.9 J of potential energy at the horizontal start) and its gears rattled.
    expect(Math.abs(p.q[0]!)).toBeGreaterThan(10 * DEG);
    expect(rattle).toBeGreaterThan(1 * DEG);
    expect(worst).toBeLessThan(1e-3);
  });
});

describe('stiction: a breakaway above the Coulomb level', () => {
  // Without gravity; joint 2's breakaway is 0.12 N m (4x its Coulomb 0.03).
  const motor = rig.plant!.motors[1]!;
  const level = { breakaway: [0.06, 0.12], arm: { ...rig.plant!.arm, g: 0 } };
  const run = (torqueNm: number): number => {
    const p = plant(level);
    p.setDuty([0, dutyForTorque(motor, rig.plant!.supplyV, torqueNm, 0)]);
    p.advance(1);
    return p.encoderQ[1]! - rig.plant!.start[1]!;
  };

  it('holds the motor still below the breakaway (0.11 N m), and lets it go above (0.13 N m)', () => {
    expect(run(0.11)).toBe(0);
    expect(run(0.13)).toBeGreaterThan(1 * DEG);
  });

  it('once moving it runs on at the lower Coulomb level: 0.05 N m keeps a joint going that it could not start', () => {
    const p = plant(level);
    p.setDuty([0, dutyForTorque(motor, rig.plant!.supplyV, 0.2, 0)]);
    p.advance(0.3);
    const moving = p.encoderQ[1]!;
    p.setDuty([0, dutyForTorque(motor, rig.plant!.supplyV, 0.05, 0)]);
    p.advance(0.8);
    expect(p.encoderQd[1]!).toBeGreaterThan(0.02);
    expect(p.encoderQ[1]! - moving).toBeGreaterThan(1 * DEG);
  });
});

describe('the H-bridge', () => {
  // The L298N fully on (no dead time, no PWM steps), as its datasheet measures the saturation voltages.
  const m = { ...rig.motors[0]!, driver: { ...DRIVER_PRESETS.l298n, deadTimeUs: 0, pwmBits: 0 } };
  const amps = (tau: number): number => tau / (m.efficiency * m.gear * m.kt);

  it("the L298N loses its datasheet's drop: 1.35 + 1.2 V at 1 A, 2 + 1.7 V at 2 A (ST L298, VCEsat typ.)", () => {
    // A supply of the bridge's drop plus the winding's I R drives exactly I through a stalled motor.
    for (const [current, drop] of [
      [1, 1.35 + 1.2],
      [2, 2 + 1.7],
    ] as const) {
      expect(amps(torqueForDuty(m, drop + current * m.R, 1, 0))).toBeCloseTo(current, 6);
    }
  });

  it('the torque-to-duty map inverts the bridge: the duty for a torque gives that torque back', () => {
    const l298 = { ...rig.motors[0]!, driver: DRIVER_PRESETS.l298n };
    for (const tau of [-2, -0.3, 0.01, 1, 2.5]) {
      for (const qd of [-1, 0, 2]) {
        const duty = dutyForTorque(l298, 12, tau, qd);
        // (exact but for the board's 8-bit PWM step: 1/255 of the 10.6 V through 3.15 ohm, 0.011 N m)
        expect(Math.abs(torqueForDuty(l298, 12, duty, qd) - tau)).toBeLessThan(0.011);
      }
    }
  });

  it('on the mock arm, the L298N leaves joint 1 about 2.7 N m at stall instead of 4.8 (the plant, injected)', () => {
    const torqueAtFullDuty = (injection?: string): number => {
      const p = plant();
      if (injection) expect(applyInjection({ name: 'test', arm: p }, parseInjection(injection))).toEqual({ ok: true });
      p.setDuty([1, 0]);
      p.advance(p.params.step);
      return p.motorTorque[0]!;
    };
    expect(torqueAtFullDuty()).toBeCloseTo(4.8, 1);
    // 0.8 x 100 x 0.01 x (12 (1 - 2 us x 490 Hz) - 1.4) / (2 + 1.15) = 2.689 at rest (less a step's back-EMF).
    expect(torqueAtFullDuty('bridge=1:l298n')).toBeCloseTo(2.689, 2);
  });

  it('a sagging supply loses the bridge drop on top: sag=0.5 leaves the L298N 6 - 1.4 V, not half of 12 - 1.4 V', () => {
    const p = plant();
    const site = { name: 'test', arm: p };
    applyInjection(site, parseInjection('bridge=1:l298n'));
    applyInjection(site, parseInjection('sag=0.5'));
    p.setDuty([1, 0]);
    p.advance(p.params.step);
    const lost = 2e-6 * 490;
    // 0.8 x 100 x 0.01 x ((1 - lost) x 6 - 1.4) / 3.15 at rest, less a step's back-EMF
    expect(p.motorTorque[0]!).toBeCloseTo((0.8 * ((1 - lost) * 6 - 1.4)) / 3.15, 2);
    applyInjection(site, parseInjection('sag=0.1'));
    p.advance(2 * p.params.step);
    expect(p.motorTorque[0]!).toBeLessThanOrEqual(0); // 1.2 V cannot pass the 1.4 V drop: no drive, only back-EMF braking
  });

  it('the dead time is a dead band: duties below t_dead x f_pwm give no torque; the map adds it back', () => {
    const d = { ...DRIVER_PRESETS.ideal, deadTimeUs: 40, pwmHz: 490 }; // 1.96 % of each period lost
    const mm = { ...m, driver: d };
    expect(Math.abs(torqueForDuty(mm, 12, 0.019, 0))).toBe(0);
    expect(Math.abs(torqueForDuty(mm, 12, -0.019, 0))).toBe(0);
    for (const tau of [-1, -0.01, 0.01, 0.5, 2]) expect(torqueForDuty(mm, 12, dutyForTorque(mm, 12, tau, 0.3), 0.3)).toBeCloseTo(tau, 10);
  });

  it('bridge figures are injections too, each per joint, checked with their units', () => {
    const p = plant();
    const site = { name: 'test', arm: p };
    applyInjection(site, parseInjection('bridgedrop=2:1.5'));
    applyInjection(site, parseInjection('bridgeohm=2:0.7'));
    applyInjection(site, parseInjection('pwmbits=2:10'));
    expect(p.driverOf(1)).toMatchObject({ dropV: 1.5, seriesOhm: 0.7, pwmBits: 10, deadTimeUs: 0 });
    expect(p.driverOf(0)).toEqual(DRIVER_PRESETS.ideal);
    applyInjection(site, parseInjection('backlash=1:2'));
    applyInjection(site, parseInjection('breakaway=2:0.2'));
    expect(p.flaws.backlash[0]! / DEG).toBeCloseTo(2, 12);
    expect(p.flaws.breakaway[1]).toBe(0.2);
    expect(() => parseInjection('bridge=1:l293d')).toThrow(/unknown H-bridge "l293d"; presets: ideal, l298n/);
    expect(() => parseInjection('pwmbits=1:7.5')).toThrow(/the PWM resolution 7.5 bits must be a whole number/);
    expect(() => parseInjection('backlash=3:1')).toThrow(/the joint "3" must be 1..2/);
  });
});

describe('with every flaw off', () => {
  it('the plant is the rigid one bit for bit (explicit zero play, breakaway at the Coulomb level, ideal bridges)', () => {
    const a = plant();
    const b = plant({
      backlash: [0, 0],
      breakaway: rig.plant!.coulomb.slice(),
      gearStiffness: [10, 10],
      motors: rig.plant!.motors.map((mm) => mm),
    });
    for (let k = 1; k <= 100; k++) {
      const duty = [Math.sin(k / 7) * 0.6, Math.cos(k / 5) * 0.4];
      a.setDuty(duty);
      b.setDuty(duty);
      a.advance(k * 0.002);
      b.advance(k * 0.002);
    }
    expect(b.q).toEqual(a.q);
    expect(b.qd).toEqual(a.qd);
    expect(b.counts()).toEqual(a.counts());
  });
});

describe("the recording carries the link's true angle (virtual time)", () => {
  it(
    "without flaws it is the encoder's reading of the same sample, to the encoder's count (the line protocol's mock)",
    async () => {
      const r = await virtualRun({ ...rig, plant: quiet }, [builtinPath(rig.arm, 'reach')!], { maxSeconds: 30 });
      const sq = [0, 0];
      let n = 0;
      for (const row of r.rows) {
        if (row[F.phase] !== 2) continue;
        n++;
        sq[0]! += (row[F.q0]! - row[F.plantQ0]!) ** 2;
        sq[1]! += (row[F.q1]! - row[F.plantQ1]!) ** 2;
      }
      // A count's rounding is uniform: RMS count / sqrt(12), 0.022 deg at 4800 counts per turn, 0.043 at 2400.
      expect(Math.sqrt(sq[0]! / n) / DEG).toBeLessThan(0.03);
      expect(Math.sqrt(sq[1]! / n) / DEG).toBeLessThan(0.05);
    },
    hangGuardMs(120_000),
  );

  it(
    'with 1.5 deg of play the encoder tracks the reach and the link, which it cannot see, does not',
    async () => {
      const flawed = {
        ...rig,
        control: { ...rig.control, disturbanceObserver: false },
        plant: { ...rig.plant!, backlash: [1.5 * DEG, 1.5 * DEG] },
      };
      const r = await virtualRun(flawed, [builtinPath(rig.arm, 'reach')!], { maxSeconds: 30 });
      expect(r.result.stop.kind).toBe('done');
      const sq = { enc: [0, 0], link: [0, 0] };
      let n = 0;
      for (const row of r.rows) {
        expect(row[F.plantKnown]).toBe(1);
        if (row[F.phase] !== 2) continue;
        n++;
        for (let j = 0; j < 2; j++) {
          const des = row[j ? F.qDes1 : F.qDes0]!;
          sq.enc[j]! += (row[j ? F.q1 : F.q0]! - des) ** 2;
          sq.link[j]! += (row[j ? F.plantQ1 : F.plantQ0]! - des) ** 2;
        }
      }
      const rms = (s: number): number => Math.sqrt(s / n) / DEG;
      expect(n).toBeGreaterThan(400);
      // Joint 1 lifts the arm against gravity: its link hangs on the far side of the play.
      expect(rms(sq.link[0]!)).toBeGreaterThan(2 * rms(sq.enc[0]!));
      expect(rms(sq.link[0]!)).toBeGreaterThan(0.3);
    },
    hangGuardMs(120_000),
  );
});
