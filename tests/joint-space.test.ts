// Joint space once (transport/joints.ts): counts -> angles and the rig file's wiring in one place, for
// the line protocol's link (which takes the wiring itself) and the Firmata samples.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { parseWiring } from '../src/mock/wiring.js';
import { countsToAngle, JointSpace } from '../src/transport/joints.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');

describe('JointSpace', () => {
  it('turns counts into angles with the joint encoder: a quarter turn of a 2400-count encoder, reversed, from 10 deg', () => {
    expect(countsToAngle({ countsPerRev: 2400, sign: -1, zero: (10 * Math.PI) / 180 }, 600)).toBeCloseTo(((10 - 90) * Math.PI) / 180, 12);
  });

  it('without wiring: input j and output j are joint j', () => {
    const s = new JointSpace(rig.encoders);
    expect(s.boardCountsPerRev).toEqual(rig.encoders.map((e) => e.countsPerRev));
    const { q, raw } = s.fromBoard([120, -480]);
    expect(raw).toEqual([120, -480]);
    expect(q).toEqual([countsToAngle(rig.encoders[0]!, 120), countsToAngle(rig.encoders[1]!, -480)]);
    expect(s.toBoard([0.25, -0.5])).toEqual([0.25, -0.5]);
    expect(s.boardMask(0b10)).toBe(0b10);
  });

  it('with wiring: swapped inputs and outputs, a reversed motor, the firmware counts of each input', () => {
    const s = new JointSpace(rig.encoders, { motorOutput: [1, 0], motorSign: [1, -1], encoderInput: [1, 0], boardCountsPerRev: [2048, 4096] });
    // input 1 reads joint 1 (its firmware counts 2048), input 0 reads joint 2 (4096)
    expect(s.boardCountsPerRev).toEqual([4096, 2048]);
    const { q, raw } = s.fromBoard([-480, 120]);
    expect(raw).toEqual([120, -480]);
    expect(q).toEqual([countsToAngle(rig.encoders[0]!, 120), countsToAngle(rig.encoders[1]!, -480)]);
    expect(s.toBoard([0.25, -0.5])).toEqual([0.5, 0.25]);
    expect(s.boardMask(0b01)).toBe(0b10);
    expect(s.toJoints(['in0', 'in1'])).toEqual(['in1', 'in0']);
  });

  it(
    "the reach on a mock wired otherwise, with the rig file's wiring section, is the reach on the plain mock, tick for tick (virtual time)",
    async () => {
      const path = builtinPath(rig.arm, 'reach')!;
      const plain = await virtualRun(rig, [path]);
      const wiredRig = { ...rig, wiring: { motorOutput: [1, 0], motorSign: [1, -1], encoderInput: [0, 1], boardCountsPerRev: rig.encoders.map((e) => e.countsPerRev) } };
      const wired = await virtualRun(wiredRig, [path], { wiring: parseWiring('swap-motors,reverse-motor=2', 2) });
      expect(wired.result.core.stop).toEqual({ kind: 'done' });
      expect(wired.rows.length).toBe(plain.rows.length);
      expect(wired.rows.map((r) => Array.from(r))).toEqual(plain.rows.map((r) => Array.from(r)));
    },
    hangGuardMs(10_000),
  );
});
