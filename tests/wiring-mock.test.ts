// The mock rig wired wrong on purpose: the --wiring parser and what each mistake does to the plant.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { createPlant, parseWiring, plantWiring, WiringError } from '../src/mock/wiring.js';

const rig = loadRig('rigs/mock-arm.json');
const plantRig = { ...rig, plant: rig.plant! };
const DEG = Math.PI / 180;

/** A plant wired as `spec`, its motors torque for `duty` at rest (no motion yet). */
function torques(spec: string, duty: number[]): number[] {
  const p = createPlant(plantRig, 0, parseWiring(spec, 2));
  p.setDuty(duty);
  p.advance(p.params.step);
  return p.motorTorque.slice();
}

/** Counts per board input with the joints at `qDeg` (noise-free plant). */
function countsAt(spec: string, qDeg: number[]): number[] {
  const p = createPlant({ ...plantRig, plant: { ...plantRig.plant, noiseCounts: 0 } }, 0, parseWiring(spec, 2));
  p.q[0] = qDeg[0]! * DEG;
  p.q[1] = qDeg[1]! * DEG;
  return p.counts();
}

describe('--wiring: the parser', () => {
  it('reads every kind, joints from 1', () => {
    const w = parseWiring('swap-motors, swap-encoders,reverse-motor=2,reverse-encoder=1,cpr=1:2048,offset=2:-30', 2);
    expect(w.mistakes).toEqual([
      { kind: 'swap-motors' },
      { kind: 'swap-encoders' },
      { kind: 'reverse-motor', joint: 1 },
      { kind: 'reverse-encoder', joint: 0 },
      { kind: 'cpr', joint: 0, counts: 2048 },
      { kind: 'offset', joint: 1, deg: -30 },
    ]);
    expect(parseWiring('', 2).mistakes).toEqual([]);
  });

  it.each([
    ['swap-motor', /item 1 "swap-motor": unknown mistake; write a comma list of swap-motors/],
    ['reverse-motor=3', /item 1 "reverse-motor=3": J must be a joint number, 1\.\.2 \(the arm has 2 joints\) \(got "3"\)/],
    ['reverse-motor', /item 1 "reverse-motor": write reverse-motor=J, e.g. reverse-motor=1/],
    ['reverse-encoder=x', /J .* \(got "x"\)/],
    ['cpr=1', /item 1 "cpr=1": write cpr=J:N, e.g. cpr=1:2048/],
    ['cpr=1:0', /N counts must be at least 1 \(got "0"\)/],
    ['cpr=1:20.5', /N counts must be a whole number/],
    ['offset=2:NaN', /DEG degrees must be a finite number \(got "NaN"\)/],
    ['offset=2:400', /DEG degrees must be within -180\.\.180/],
    ['swap-motors=1', /item 1 "swap-motors=1": takes no value/],
    ['reverse-motor=1,swap-encoders,reverse-motor=1', /item 3 "reverse-motor=1": said twice/],
  ])('%s is refused with one line naming the item', (spec, msg) => {
    let err: unknown;
    try {
      parseWiring(spec, 2);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WiringError);
    expect((err as Error).message).toMatch(msg);
    expect((err as Error).message).not.toContain('\n');
  });

  it('a one-link arm has nothing to swap', () => {
    expect(() => parseWiring('swap-encoders', 1)).toThrow(/one-link arm has nothing to swap/);
  });
});

describe('--wiring: the plant behaves as the miswired arm', () => {
  it('correct wiring: output i turns joint i the positive way', () => {
    const t = torques('', [0.2, 0]);
    expect(t[0]).toBeGreaterThan(0.5);
    expect(Math.abs(t[1]!)).toBeLessThan(0.01);
  });

  it('swap-motors: output 1 drives joint 2', () => {
    const t = torques('swap-motors', [0.2, 0]);
    expect(Math.abs(t[0]!)).toBeLessThan(0.01);
    expect(t[1]).toBeGreaterThan(0.2);
  });

  it('reverse-motor=1: a positive duty gives a negative torque on joint 1 only', () => {
    const t = torques('reverse-motor=1', [0.2, 0.2]);
    expect(t[0]).toBeLessThan(-0.5);
    expect(t[1]).toBeGreaterThan(0.2);
  });

  it('swap-encoders: input 1 reads joint 2', () => {
    const right = countsAt('', [-60, 30]);
    const swapped = countsAt('swap-encoders', [-60, 30]);
    // Joint 1 is 30 deg from its zero (-90), joint 2 30 deg from 0: each input counts with its own encoder's resolution.
    expect(right).toEqual([400, 200]);
    expect(swapped).toEqual([200, 400]);
  });

  it('reverse-encoder=2: joint 2 counts backwards', () => {
    expect(countsAt('reverse-encoder=2', [-60, 30])).toEqual([400, -200]);
  });

  it('cpr=1:2048: the board reports 2048 but the encoder gives 4800', () => {
    const w = plantWiring(parseWiring('cpr=1:2048', 2), rig.encoders, rig.plant!.start);
    expect(w.boardEncoders.map((e) => e.countsPerRev)).toEqual([2048, 2400]);
    const p = createPlant(plantRig, 0, parseWiring('cpr=1:2048', 2));
    expect(p.encoders.map((e) => e.countsPerRev)).toEqual([2048, 2400]);
    expect(countsAt('cpr=1:2048', [-60, 30])).toEqual([400, 200]);
  });

  it('offset=1:20: the counts are zero 20 deg from zeroDeg, so the hanging arm reads -20 deg', () => {
    expect(countsAt('offset=1:20', [-90, 0])).toEqual([Math.round((-20 / 360) * 4800), 0]);
  });

  it('the truth does not follow the rig file: a rig file that says the encoder is reversed does not reverse the arm', () => {
    const believed = { ...plantRig, encoders: [{ ...rig.encoders[0]!, sign: -1 as const, zero: 0 }, rig.encoders[1]!] };
    const p = createPlant({ ...believed, plant: { ...plantRig.plant, noiseCounts: 0 } }, 0, parseWiring('reverse-encoder=1', 2));
    p.q[0] = -60 * DEG;
    expect(p.counts()[0]).toBe(-400);
  });

  it('combined: swap-encoders and reverse-encoder=1 (joint 1 is read backwards on input 2)', () => {
    expect(countsAt('swap-encoders,reverse-encoder=1', [-60, 30])).toEqual([200, -400]);
  });

  it('zeroing a board input zeroes the encoder wired to it', () => {
    const p = createPlant({ ...plantRig, plant: { ...plantRig.plant, noiseCounts: 0 } }, 0, parseWiring('swap-encoders', 2));
    p.q[0] = -60 * DEG;
    p.q[1] = 30 * DEG;
    p.zeroEncoders(0b01);
    expect(p.counts()).toEqual([0, 400]);
  });
});
