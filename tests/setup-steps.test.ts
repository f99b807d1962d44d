// The steps of twolink setup as pure functions of evidence: what each concludes, and the rig file they write.
import { describe, expect, it } from 'vitest';
import { loadRig, resolveRig } from '../src/config/load.js';
import { parseRigFile } from '../src/config/rig.js';
import { correctedRigFile } from '../src/setup/rigfile.js';
import {
  believed,
  checkBoard,
  checkEncoder,
  checkMotor,
  checkMotorsDistinct,
  checkZero,
  responseDirections,
  type PulseEvidence,
} from '../src/setup/steps.js';

const rig = loadRig('rigs/mock-arm.json');
const DEG = Math.PI / 180;

describe('setup step 1: the board', () => {
  it('passes a board that reports what the rig file says', () => {
    const r = checkBoard({ firmware: 'twolink/1.0', board: 'uno', protocol: '1', joints: 2, countsPerRev: [4800, 2400] }, rig);
    expect(r.status).toBe('pass');
  });
  it('warns (to be measured) when the counts per revolution differ, and fails on the joint count', () => {
    expect(checkBoard({ firmware: 'f', board: 'uno', protocol: '1', joints: 2, countsPerRev: [2048, 2400] }, rig)).toMatchObject({
      status: 'warn',
      fix: null,
    });
    const bad = checkBoard({ firmware: 'f', board: 'uno', protocol: '1', joints: 1, countsPerRev: [2048] }, rig);
    expect(bad.status).toBe('fail');
    expect(bad.fix).toMatch(/flash the firmware built for 2 joints/);
  });
});

describe('setup step 2: the encoders, by hand', () => {
  const board = [4800, 2400];
  it('joint 1 turned 90 deg: input 1 counts up a quarter of 4800', () => {
    const f = believed(rig);
    const r = checkEncoder({ joint: 0, deg: 90, before: [0, 0], after: [1195, 3] }, board, rig, f);
    expect(r.status).toBe('pass');
    expect(r.evidence).toMatchObject({ input: 1, sign: 1, countsPerRevMeasured: 4780 });
    expect(f.encoderInput[0]).toBe(0);
  });
  it('a reversed encoder: the sign, and the wire to swap', () => {
    const f = believed(rig);
    const r = checkEncoder({ joint: 1, deg: 90, before: [0, 0], after: [2, -600] }, board, rig, f);
    expect(r.status).toBe('fail');
    expect(r.corrected).toBe(true);
    expect(r.fix).toMatch(/swap encoder 2's A and B wires, or keep encoders\[1\]\.sign = -1 \(written\)/);
    expect(f.encoderSign[1]).toBe(-1);
  });
  it('swapped encoders: joint 1 counts on input 2 (with the board believing input 2 is joint 2s)', () => {
    const f = believed(rig);
    const r = checkEncoder({ joint: 0, deg: 90, before: [0, 0], after: [0, 1200] }, board, rig, f);
    expect(r.status).toBe('fail');
    expect(r.summary).toMatch(/joint 1's encoder is on input 2/);
    expect(r.fix).toMatch(/swap the two encoder cables/);
    expect(f.encoderInput[0]).toBe(1);
    expect(f.countsPerRev[0]).toBe(4800);
    expect(f.boardCountsPerRev[0]).toBe(2400);
  });
  it('the board misreports its counts: the rig file and the measurement agree, the firmware is to reflash', () => {
    const f = believed(rig);
    const r = checkEncoder({ joint: 0, deg: 90, before: [0, 0], after: [1210, 0] }, [2048, 2400], rig, f);
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/set TL_CPR_1 to 4800 in firmware-protocol\/firmware\/twolink_fw\/config\.h/);
    expect(f.countsPerRev[0]).toBe(4800);
    expect(f.boardCountsPerRev[0]).toBe(2048);
  });
  it('the rig file is the one that is wrong: the board and the measurement agree', () => {
    const f = believed(rig);
    const r = checkEncoder({ joint: 0, deg: 90, before: [0, 0], after: [515, 0] }, [2048, 2400], rig, f);
    expect(r.status).toBe('warn');
    expect(r.fix).toMatch(/encoders\[0\]\.countsPerRev = 2048 \(written\)/);
    expect(f.countsPerRev[0]).toBe(2048);
  });
  it('nothing counted: a fail that setup cannot correct', () => {
    const r = checkEncoder({ joint: 0, deg: 90, before: [5, 5], after: [6, 4] }, board, rig, believed(rig));
    expect(r).toMatchObject({ status: 'fail', corrected: false });
    expect(r.fix).toMatch(/check joint 1's encoder: its 5 V and ground/);
  });
});

describe('setup step 3: the zero against gravity', () => {
  it('the hanging arm reads the hanging pose: pass', () => {
    const r = checkZero({ counts: [3, -4], settledS: 2 }, rig, believed(rig));
    expect(r.status).toBe('pass');
  });
  it('powered on 30 deg away: the zeroDeg that makes the hanging arm read -90', () => {
    const f = believed(rig);
    const r = checkZero({ counts: [-400, 0], settledS: 2 }, rig, f);
    expect(r.status).toBe('warn');
    expect(r.corrected).toBe(true);
    expect(f.zeroDeg[0]).toBe(-60);
    expect(r.fix).toMatch(/joint 1 was at -60 deg when the board was powered on/);
  });
  it('an arm that never came to rest is a warning', () => {
    expect(checkZero({ counts: [0, 0], settledS: Infinity }, rig, believed(rig)).status).toBe('warn');
  });
});

describe('setup step 4: the motors', () => {
  const dirs = responseDirections(rig);
  /** A ramp on `output` that moves the joints by `dqDeg` at the end. */
  const pulse = (output: number, dqDeg: number[], sign = 1): PulseEvidence => {
    const t: number[] = [];
    const duty: number[] = [];
    const q: number[][] = [];
    for (let k = 0; k <= 100; k++) {
      t.push(k * 0.005);
      duty.push(sign * 0.001 * k);
      const s = Math.max(0, (k - 40) / 60);
      q.push([(-90 + s * dqDeg[0]!) * DEG, s * dqDeg[1]! * DEG]);
    }
    return { output, t, duty, q };
  };

  it('the hanging arm: a torque on joint 1 swings link 1 with link 2 staying vertical', () => {
    // K^-1 e1 is along (1, -1): joint 2 turns back by as much as joint 1 turns.
    expect(dirs[0]![1]! / dirs[0]![0]!).toBeCloseTo(-1, 6);
    expect(dirs[1]![1]! / dirs[1]![0]!).toBeLessThan(-3);
  });

  it('output 1 turns joint 1 the positive way: pass, with the duty it started at', () => {
    const f = believed(rig);
    const r = checkMotor(pulse(0, [5, -1]), rig, f, dirs);
    expect(r.status).toBe('pass');
    expect(r.evidence).toMatchObject({ joint: 1, sign: 1 });
    expect(r.evidence.startDuty as number).toBeGreaterThan(0.04);
  });

  it('output 1 turns joint 2: swapped motors', () => {
    const f = believed(rig);
    const r = checkMotor(pulse(0, [-0.3, 5]), rig, f, dirs);
    expect(r.status).toBe('fail');
    expect(r.fix).toMatch(/swap the two motors' cables at the driver/);
    expect(f.motorOutput[1]).toBe(0);
  });

  it('a positive duty turns joint 2 clockwise: a reversed motor', () => {
    const f = believed(rig);
    const r = checkMotor(pulse(1, [0.2, -5]), rig, f, dirs);
    expect(r.fix).toMatch(/swap the two leads of joint 2's motor/);
    expect(f.motorSign[1]).toBe(-1);
  });

  it('nothing moved: a fail that setup cannot correct', () => {
    const r = checkMotor(pulse(0, [0.1, 0.1]), rig, believed(rig), dirs);
    expect(r).toMatchObject({ status: 'fail', corrected: false });
  });

  it('both outputs on one joint contradict each other', () => {
    const f = believed(rig);
    const a = checkMotor(pulse(0, [5, -1]), rig, f, dirs);
    const b = checkMotor(pulse(1, [5, -1]), rig, f, dirs);
    expect(checkMotorsDistinct([a, b])?.status).toBe('fail');
  });
});

describe('setup: the corrected rig file', () => {
  it('writes what was found, lists each change, and is a valid rig file', () => {
    const f = believed(rig);
    f.encoderSign[1] = -1;
    f.zeroDeg[0] = -60;
    f.motorOutput = [1, 0];
    f.motorSign = [1, -1];
    f.boardCountsPerRev = [2048, 2400];
    const raw = JSON.parse(JSON.stringify(rig.source)) as Record<string, unknown>;
    const { file, changes } = correctedRigFile(raw, rig, f);
    expect(changes.map((c) => c.field).sort()).toEqual([
      'encoders[0].zeroDeg',
      'encoders[1].sign',
      'wiring.boardCountsPerRev',
      'wiring.motorOutput',
      'wiring.motorSign',
    ]);
    expect(file.wiring).toEqual({ motorOutput: [2, 1], motorSign: [1, -1], boardCountsPerRev: [2048, 2400] });
    const again = resolveRig(parseRigFile(file, 'fixed.json'), 'fixed.json');
    expect(again.wiring).toEqual({ motorOutput: [1, 0], motorSign: [1, -1], encoderInput: [0, 1], boardCountsPerRev: [2048, 2400] });
    expect(again.encoders[0]!.zero).toBeCloseTo(-60 * DEG, 12);
  });

  it('an arm wired as the table of docs/first-arm.md says needs no wiring section: an old one is removed', () => {
    const raw = { ...(JSON.parse(JSON.stringify(rig.source)) as Record<string, unknown>), wiring: { motorSign: [1, -1] } };
    const withWiring = resolveRig(parseRigFile(raw, 'x.json'), 'x.json');
    const f = believed(withWiring);
    f.motorSign = [1, 1];
    const { file, changes } = correctedRigFile(raw, withWiring, f);
    expect(file.wiring).toBeUndefined();
    expect(changes).toEqual([{ field: 'wiring.motorSign', from: [1, -1], to: [1, 1], step: 'motors' }]);
  });
});
