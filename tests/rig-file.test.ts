// Rig and trajectory files: what is valid, and errors that name the file and the field.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { loadTrajectoryFile } from '../src/config/trajectory-file.js';
import { rigFileErrorOf } from './helpers/rig-error.js';

const dir = mkdtempSync(`${tmpdir()}/twolink-rig-`);
let n = 0;
function write(content: unknown): string {
  const f = `${dir}/rig${n++}.json`;
  writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return f;
}
const arm = { L1: 0.3, L2: 0.25, d1: 0.15, d2: 0.1, m1: 0.6, m2: 0.35, I1: 0.006, I2: 0.0025, g: 9.81 };

const errorOf = rigFileErrorOf;

describe('rig files', () => {
  it('every rig that ships is valid', () => {
    for (const f of readdirSync('rigs').filter((x) => x.endsWith('.json'))) {
      const rig = loadRig(`rigs/${f}`);
      expect(rig.joints === 1 || rig.joints === 2).toBe(true);
    }
  });

  it('a file with only the arm section is valid and gets defaults', () => {
    const rig = loadRig(write({ arm }));
    expect(rig.joints).toBe(2);
    expect(rig.control.rateHz).toBe(500);
    expect(rig.control.pid.kp).toHaveLength(2);
    expect(rig.limits).toHaveLength(2);
    expect(rig.plant).toBeUndefined();
  });

  it('a one-link arm has only L1, d1, m1, I1, g', () => {
    const rig = loadRig(write({ arm: { L1: 0.4, d1: 0.2, m1: 0.5, I1: 0.006, g: 9.81 } }));
    expect(rig.joints).toBe(1);
    expect(rig.control.pid.kp).toHaveLength(1);
  });

  it.each([
    [
      'a missing field',
      { arm: { ...arm, m2: undefined } },
      'arm.m2',
      /arm\.m2: Invalid input: expected number, received undefined \(missing\)/,
    ],
    ['a wrong type', { arm: { ...arm, L1: '0.3' } }, 'arm.L1', /arm\.L1: .*expected number, received string \(got "0.3"\)/],
    ['a negative mass', { arm: { ...arm, m1: -1 } }, 'arm.m1', /arm\.m1: must be > 0 \(got -1\)/],
    ['NaN written as a string', { arm: { ...arm, I2: 'NaN' } }, 'arm.I2', /arm\.I2: .*received string \(got "NaN"\)/],
    ['an impossible inertia', { arm: { ...arm, I1: 1 } }, 'arm.I1', /arm\.I1: inertia 1 kg m\^2 is impossible for a 0.6 kg link/],
    ['a centre of mass beyond the link', { arm: { ...arm, d2: 0.3 } }, 'arm.d2', /lies beyond the link's end/],
    [
      'reversed joint limits',
      { arm, limits: [{ minDeg: 90, maxDeg: -90 }, {}] },
      'limits[0].minDeg',
      /limits\[0\]\.minDeg: minDeg must be below maxDeg \(the limits are reversed\)/,
    ],
    ['an unknown key (a typo)', { arm, control: { pid: { kP: [1, 2] } } }, 'control.pid.kP', /control\.pid\.kP: unknown key \(a typo\?\)/],
    ['per-joint arrays of the wrong length', { arm, control: { pid: { kp: [1, 2, 3] } } }, 'control.pid.kp', /control\.pid\.kp/],
    [
      'a rate out of range',
      { arm, control: { rateHz: 5000 } },
      'control.rateHz',
      /control\.rateHz: must be between 100 and 1000 Hz \(got 5000\)/,
    ],
  ])('%s is refused, naming the file and the field', (_what, content, field, re) => {
    const f = write(content);
    const e = errorOf(() => loadRig(f));
    expect(e.message.startsWith(`${f}: `)).toBe(true);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(re);
  });

  it('invalid JSON names the line and column', () => {
    const f = write('{\n  "arm": {\n    "L1": 0.3,,\n  }\n}');
    const e = errorOf(() => loadRig(f));
    expect(e.message).toMatch(/line 3, column \d+: invalid JSON/);
  });

  it('a missing file says so', () => {
    expect(errorOf(() => loadRig(`${dir}/none.json`)).message).toMatch(/none\.json: no such file/);
  });

  it('the plant overrides the nominal arm key by key', () => {
    const rig = loadRig(write({ arm, plant: { arm: { m1: 0.7 }, viscous: [0.02, 0.01] } }));
    expect(rig.plant!.arm).toMatchObject({ ...arm, m1: 0.7 });
    expect(rig.plant!.viscous).toEqual([0.02, 0.01]);
    expect(rig.plant!.coulomb).toEqual([0, 0]);
  });
});

describe('trajectory files', () => {
  it('a valid file converts degrees to radians', () => {
    const f = write({ start: { q: [0, 90] }, steps: [{ joint: [45, 45], duration: 1 }, { hold: 0.5 }, { line: [0.3, 0.2], duration: 1 }] });
    const p = loadTrajectoryFile(f);
    expect(p.start.q![1]).toBeCloseTo(Math.PI / 2, 15);
    expect(p.steps[0]).toMatchObject({ kind: 'joint', duration: 1 });
    expect(p.steps[1]).toEqual({ kind: 'hold', duration: 0.5 });
  });

  it('errors name the step and field', () => {
    const f = write({
      start: { q: [0, 90] },
      steps: [
        { joint: [45, 45], duration: 1 },
        { line: [0.3], duration: 1 },
      ],
    });
    expect(errorOf(() => loadTrajectoryFile(f)).message).toMatch(/steps\[1\]\.line/);
    const g = write({ start: { q: [0, 90] }, steps: [{ joint: [45, 45], duration: -1 }] });
    expect(errorOf(() => loadTrajectoryFile(g)).message).toMatch(/steps\[0\]\.duration: must be > 0 s \(got -1\)/);
  });
});
