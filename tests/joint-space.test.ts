// Joint space once (transport/joints.ts): counts -> angles and the rig file's wiring in one place, for
// every transport: the line protocol's link and the Firmata link both hand their raw board-order
// values to it.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { parseWiring } from '../src/mock/wiring.js';
import { compose } from '../src/run/compose.js';
import { countsToAngle, JointSpace, rawToAngle } from '../src/transport/joints.js';
import type { Reading } from '../src/transport/link.js';
import { F } from '../src/telemetry/tick.js';
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
    const s = new JointSpace(rig.encoders, {
      motorOutput: [1, 0],
      motorSign: [1, -1],
      encoderInput: [1, 0],
      boardCountsPerRev: [2048, 4096],
    });
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
      const wiredRig = {
        ...rig,
        wiring: {
          motorOutput: [1, 0],
          motorSign: [1, -1],
          encoderInput: [0, 1],
          boardCountsPerRev: rig.encoders.map((e) => e.countsPerRev),
        },
      };
      const wired = await virtualRun(wiredRig, [path], { wiring: parseWiring('swap-motors,reverse-motor=2', 2) });
      expect(wired.result.core.stop).toEqual({ kind: 'done' });
      expect(wired.rows.length).toBe(plain.rows.length);
      expect(wired.rows.map((r) => Array.from(r))).toEqual(plain.rows.map((r) => Array.from(r)));
    },
    hangGuardMs(10_000),
  );

  it('a potentiometer (Firmata) reads through its calibration: 512 of 0..1023 over -90..90 deg is 0.09 deg', () => {
    expect(rawToAngle({ rawAtMin: 0, rawAtMax: 1023, minDeg: -90, maxDeg: 90 }, 512)).toBeCloseTo(
      ((-90 + (512 / 1023) * 180) * Math.PI) / 180,
      12,
    );
  });
});

/** The Firmata rig file, and the same arm on the line protocol; both without encoder noise, wired as `wiring` says. */
function bothTransports(wiring: Rig['wiring']): Rig[] {
  const firmata = loadRig('rigs/mock-arm-firmata.json');
  const plant = { ...firmata.plant!, noiseCounts: 0 };
  const base = { ...firmata, plant, ...(wiring ? { wiring } : {}) };
  return [{ ...base, link: { ...firmata.link, transport: 'line', baudRate: 1_000_000 } }, base];
}

/** Swapped motors and encoders, motor 2 reversed: on the mock (the truth) and in the rig file's wiring section (what the host believes). */
const MISWIRED = 'swap-motors,swap-encoders,reverse-motor=2';
// Input 1 reads joint 2 and reports joint 1's 4800 counts per revolution (the firmware's config), input 2 reads joint 1.
const SECTION = { motorOutput: [1, 0], motorSign: [1, -1], encoderInput: [1, 0], boardCountsPerRev: [2400, 4800] };

describe('one joint layer for both transports (virtual time)', () => {
  it(
    'the same board counts give the same joint angles through the line protocol and Firmata, with swapped and reversed wiring; joint duties reach the same board outputs',
    async () => {
      const got: { transport: string; board: number[]; r: Reading; duty: number[] }[] = [];
      for (const rig of bothTransports(SECTION)) {
        const c = await compose(rig, { kind: 'mock', wiring: parseWiring(MISWIRED, 2) }, { time: 'virtual' });
        try {
          await c.drive(c.link.open());
          const plant = c.end.local!.mock.plant;
          // The arm held still, each board input at a count of its own.
          plant.injected.stalled.fill(true);
          plant.injected.encoderOffset.splice(0, 2, 300, -1234);
          await c.drive(c.link.enable(true));
          await c.drive(c.link.startSampling(rig.control.rateHz));
          const r = await c.drive(
            new Promise<Reading>((resolve) => {
              let n = 0;
              c.link.onSample((s) => {
                c.link.writeDuty([0.2, -0.4]);
                if (++n === 5) resolve(s);
              });
            }),
          );
          got.push({ transport: rig.link.transport, board: plant.counts(), r, duty: plant.duty.slice() });
        } finally {
          await c.close();
        }
      }
      expect(got.map((g) => g.transport)).toEqual(['line', 'firmata']);
      const encoders = got.length > 0 ? bothTransports(SECTION)[0]!.encoders : [];
      for (const g of got) {
        expect(g.board).toEqual([300, -1234]);
        // Joint 1 is read on input 2, joint 2 on input 1, each with its own encoder.
        expect(g.r.raw).toEqual([-1234, 300]);
        expect(g.r.q).toEqual([countsToAngle(encoders[0]!, -1234), countsToAngle(encoders[1]!, 300)]);
        // Joint 1's duty goes to output 2; joint 2's, reversed, to output 1 (to the board's resolution: Firmata's PWM has 255 steps).
        expect(g.duty[0]).toBeCloseTo(0.4, 2);
        expect(g.duty[1]).toBeCloseTo(0.2, 2);
      }
      expect(got[1]!.r.q).toEqual(got[0]!.r.q);
    },
    hangGuardMs(30_000),
  );

  it(
    "the reach on a Firmata mock wired otherwise, with the rig file's wiring section, follows the reach on the plain Firmata mock",
    async () => {
      // Not tick for tick as on the line protocol: Firmata writes each motor's pins in turn at 57600
      // baud, so swapped and reversed outputs change which bytes reach the board first. Without the
      // wiring applied the arm would run away (the wiring monitor stops it): here it follows as the plain one does.
      const [, plainRig] = bothTransports(undefined);
      const [, wiredRig] = bothTransports(SECTION);
      const path = builtinPath(plainRig!.arm, 'reach')!;
      const plain = await virtualRun(plainRig!, [path]);
      const wired = await virtualRun(wiredRig!, [path], { wiring: parseWiring(MISWIRED, 2) });
      expect(plain.result.core.stop).toEqual({ kind: 'done' });
      expect(wired.result.core.stop).toEqual({ kind: 'done' });
      let worst = 0;
      const n = Math.min(plain.rows.length, wired.rows.length);
      for (let i = 0; i < n; i++) for (const f of [F.q0, F.q1]) worst = Math.max(worst, Math.abs(wired.rows[i]![f]! - plain.rows[i]![f]!));
      expect(n).toBeGreaterThan(1000);
      expect(worst).toBeLessThan(0.03); // [rad]: 1.7 deg on a reach of about 90 deg
    },
    hangGuardMs(30_000),
  );
});
