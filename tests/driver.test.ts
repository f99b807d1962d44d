// The H-bridge is part of the rig (issue 33.2): `motors[j].driver`, a preset with its datasheet's
// figures or its numbers; the model's torque<->duty, the feasibility check, the twin and the
// passivity bound use it; the L298N's reach is refused before motion, naming the driver, the supply
// and the torque, with a --speed that fits, and at that speed it is done.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPlausible, loadRig, parseJsonText, resolveRig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { FeasibilityError, FEASIBLE_HEADROOM, preflight } from '../src/control/feasibility.js';
import { createActuatedArmModel, motorDamping, motorTorque } from '../src/model/actuated.js';
import { builtinPath, scalePath } from '../src/model/builtins.js';
import { DRIVER_PRESETS, driverLabel, type DriverParams, type DriverPresetName } from '../src/model/driver.js';
import { virtualRun } from '../src/run/virtual.js';
import { twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { rigFileErrorOf } from './helpers/rig-error.js';

const l298n = loadRig('rigs/mock-arm-l298n.json');
const mockArm = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')) as { motors: Record<string, unknown>[]; supplyV?: number };

/** rigs/mock-arm.json with joint 1's motor driven by `driver`, and `patch` on top. */
function withDriver(driver: unknown, patch: Record<string, unknown> = {}) {
  const raw = { ...mockArm, motors: mockArm.motors.map((m, i) => (i === 0 ? { ...m, driver } : m)), ...patch };
  return checkPlausible(resolveRig(parseRigFile(parseJsonText(JSON.stringify(raw), 'x.json'), 'x.json'), 'x.json'));
}

const refusal = rigFileErrorOf;

describe('the presets: their datasheets, pinned', () => {
  it.each<[DriverPresetName, Partial<DriverParams>, string]>([
    ['l298n', { dropV: 1.4, seriesOhm: 1.15, maxSupplyV: 46, maxCurrentA: 2 }, 'ST L298: 2.55 V at 1 A, 3.7 V at 2 A; 46 V; 2 A DC'],
    [
      'tb6612',
      { dropV: 0, seriesOhm: 0.5, maxSupplyV: 15, maxCurrentA: 1.2 },
      'Toshiba TB6612FNG: 0.5 ohm upper + lower; VM 15 V; 1.2 A average',
    ],
    ['drv8871', { dropV: 0, seriesOhm: 0.565, maxSupplyV: 45, maxCurrentA: 3.6 }, 'TI DRV8871: 565 mOhm HS + LS; 45 V; 3.6 A peak'],
    [
      'bts7960',
      { dropV: 0, seriesOhm: 0.016, maxSupplyV: 27.5, maxCurrentA: 43 },
      'Infineon BTS7960B: 7 + 9 mOhm; 27.5 V lock-out; 43 A limit',
    ],
    ['vnh5019', { dropV: 0, seriesOhm: 0.036, maxSupplyV: 41, maxCurrentA: 30 }, 'ST VNH5019A-E: 2 x 18 mOhm; 41 V; 30 A'],
  ])('%s: %o (%s), on the Arduino PWM (8 bit, 490 Hz)', (name, figures) => {
    expect(DRIVER_PRESETS[name]).toMatchObject({ ...figures, preset: name, pwmHz: 490, pwmBits: 8 });
  });

  it('the ideal bridge is the model without a bridge, bit for bit', () => {
    const bare = createActuatedArmModel({ ...l298n, motors: mockArm.motors.map(() => ({ ...l298n.motors[0]!, driver: undefined })) });
    const ideal = createActuatedArmModel({
      ...l298n,
      motors: mockArm.motors.map(() => ({ ...l298n.motors[0]!, driver: DRIVER_PRESETS.ideal })),
    });
    for (const [duty, qd] of [
      [0.37, 1.3],
      [-0.91, -0.2],
      [0.0031, 0],
    ] as const) {
      expect(motorTorque(ideal, 0, duty, qd)).toBe(motorTorque(bare, 0, duty, qd));
    }
    expect(motorDamping(ideal, 0)).toBe(motorDamping(bare, 0));
  });
});

describe('motors[j].driver in the rig file', () => {
  it('a preset by name, or numbers on top of a preset or of the ideal bridge', () => {
    expect(withDriver('tb6612').motors[0]!.driver).toEqual(DRIVER_PRESETS.tb6612);
    expect(withDriver({ preset: 'l298n', pwmHz: 980 }).motors[0]!.driver).toEqual({ ...DRIVER_PRESETS.l298n, pwmHz: 980 });
    const { preset: _none, ...ideal } = DRIVER_PRESETS.ideal;
    expect(withDriver({ seriesOhm: 0.3, deadTimeUs: 5 }).motors[0]!.driver).toEqual({ ...ideal, seriesOhm: 0.3, deadTimeUs: 5 });
  });

  it('the mock plant has the declared bridge too, unless its plant section says otherwise', () => {
    expect(l298n.plant!.motors.map((m) => m.driver?.preset)).toEqual(['l298n', 'l298n']);
    expect(loadRig('rigs/mock-arm-flawed.json').plant!.motors.map((m) => m.driver?.preset)).toEqual(['tb6612', 'tb6612']);
  });

  it('refuses, naming the field: an unknown preset, a supply above the bridge, a drop above the supply', () => {
    expect(refusal(() => withDriver('l293d')).message).toMatch(/x\.json: motors\[0\]\.driver: /);
    expect(refusal(() => withDriver('tb6612', { supplyV: 24 })).message).toMatch(
      /motors\[0\]\.driver: the TB6612FNG H-bridge \(.*\) takes at most 15 V \(its datasheet\), but the supply is 24 V/,
    );
    expect(refusal(() => withDriver({ dropV: 13 })).message).toMatch(
      /motors\[0\]\.driver\.dropV: the H-bridge \(13 V \+ 0 ohm.*\) loses 13 V across its switches, no less than the 12 V supply/,
    );
    expect(refusal(() => withDriver({ preset: 'l298n', dropV: 1.4, pwmBits: 3.5 })).message).toMatch(/motors\[0\]\.driver/);
  });

  it("the model, the twin's and the passivity bound's, loses the bridge's drop and resistance", () => {
    const model = createActuatedArmModel(l298n);
    // 0.8 x 100 x 0.01 x (12 (1 - 2 us x 490 Hz) - 1.4 V) / (2 + 1.15 ohm): 2.69 N m at stall, not 4.8.
    expect(motorTorque(model, 0, 1, 0)).toBeCloseTo(2.689, 3);
    // Back-EMF damping through the winding and the bridge: 0.8 x 100^2 x 0.01 x 0.01 / (2 + 1.15).
    expect(motorDamping(model, 0)).toBeCloseTo(0.8 / 3.15, 12);
    expect(driverLabel(DRIVER_PRESETS.l298n)).toBe('L298N H-bridge (1.4 V + 1.15 ohm, 2 us per period at 490 Hz)');
  });
});

describe('the feasibility check knows the driver', () => {
  const reach = builtinPath(l298n.arm, 'reach')!;
  const at = (speed: number) => () => preflight(l298n, [scalePath(reach, speed)], { speed: { at: speed, min: 0.25 } });

  it('refuses the L298N reach before motion: the driver, the supply, the torque, and the --speed that fits', () => {
    let e: unknown;
    try {
      at(1)();
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(FeasibilityError);
    const f = e as FeasibilityError;
    expect(f.joint).toBe(0);
    expect(f.message).toMatch(
      /joint 1: needs \d\.\d\d N m of the \d\.\d\d N m available \(the motor through its L298N H-bridge \(1\.4 V \+ 1\.15 ohm[^)]*\) on the 12 V supply at -?\d+ deg\/s/,
    );
    expect(f.message).toMatch(
      new RegExp(`more than the ${Math.round(FEASIBLE_HEADROOM * 100)} % twolink plans with through a declared H-bridge`),
    );
    expect(f.feasibleSpeed).toBe(0.65);
    expect(f.message).toMatch(/at --speed 0\.65 it fits, with 12 % of the torque to spare$/);
    // The speed it names passes, and so does any slower one.
    expect(at(0.65)).not.toThrow();
    expect(at(0.25)).not.toThrow();
  });

  it('says when no speed fits: the same arm on a 9 V supply cannot even hold it level', () => {
    const weak = { ...l298n, supplyV: 9 };
    const e = (() => {
      try {
        preflight(weak, [reach], { speed: { at: 1, min: 0.25 } });
      } catch (x) {
        return x as FeasibilityError;
      }
      throw new Error('expected a refusal');
    })();
    expect(e.feasibleSpeed).toBeNull();
    expect(e.message).toMatch(/on the 9 V supply.*; no --speed down to 0\.25 fits it/);
  });

  it(
    'twolink run refuses it before anything moves, exit 2, with the --speed that fits',
    async () => {
      const r = await twolink(['run', '--rig', 'rigs/mock-arm-l298n.json', '--mock', '--traj', 'reach', '--json']);
      expect(r.stderr).toMatch(
        /^twolink: trajectory "reach" at t = \d\.\d{3} s, joint 1: needs .*L298N H-bridge .* on the 12 V supply .*; at --speed 0\.65 it fits/,
      );
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
    },
    hangGuardMs(60_000),
  );

  it(
    'at the --speed it names, the L298N reach is done on the mock (its heavier links included): no following-error stop',
    async () => {
      const r = await virtualRun(l298n, [scalePath(reach, 0.65)], { maxSeconds: 30 });
      expect(r.result.stop).toEqual({ kind: 'done' });
    },
    hangGuardMs(120_000),
  );
});
