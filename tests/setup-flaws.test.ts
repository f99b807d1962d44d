// Issue 33.5 (setup's part): `twolink setup` pulses each motor both ways and writes the duty that starts
// each joint from rest, per direction, into the rig file (motors[j].breakawayDuty [ccw, cw]). On the
// flawed mock (rigs/mock-arm-flawed.json: breakaway 4x Coulomb, 1.5 deg of play, the TB6612 modelled;
// virtual time) the duties are the plant's breakaway torque through its motor and driver, within 25 %.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { createActuatedArmModel, motorDuty } from '../src/model/actuated.js';
import { lastJson, twolink } from './helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const RIG = 'rigs/mock-arm-flawed.json';

type SetupJson = {
  steps: { name: string; status: string; evidence: Record<string, unknown> }[];
  changes: { field: string; step: string }[];
  rigFile: string | null;
};

describe('twolink setup --mock on the flawed arm: the breakaway duty per direction and the play, written', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'twolink-setup-flaws-')), 'rig.json');
  let json: SetupJson;
  let stderr = '';
  const rig = loadRig(RIG);
  const plant = rig.plant!;
  const enc = (): { backlashDeg?: number }[] =>
    (JSON.parse(readFileSync(out, 'utf8')) as { encoders: { backlashDeg?: number }[] }).encoders;
  const playStep = (): SetupJson['steps'][number] | undefined => json.steps.find((s) => s.name === 'play');

  beforeAll(async () => {
    const r = await twolink(['setup', '--rig', RIG, '--mock', '--yes', '--json', '--out', out], { timeoutMs: CHILD_GUARD_MS });
    json = lastJson(r) as SetupJson;
    stderr = r.stderr;
  });

  it("each joint's [ccw, cw] duty in motors[j].breakawayDuty, within 25 % of the plant's breakaway torque as a duty", () => {
    // (the flawed arm's first reach may stop: control through the play is issue 33.3's; the file is written either way)
    expect(json.rigFile, stderr).toBe(out);
    const truth = createActuatedArmModel({ ...rig, motors: plant.motors });
    const written = JSON.parse(readFileSync(out, 'utf8')) as { motors: { breakawayDuty?: [number, number] }[] };
    for (const j of [0, 1]) {
      const step = json.steps.find((s) => s.name === `breakaway ${j + 1}`);
      expect(step?.status).toBe('pass');
      expect(json.changes.map((c) => c.field)).toContain(`motors[${j}].breakawayDuty`);
      const d = written.motors[j]!.breakawayDuty!;
      expect(d).toHaveLength(2);
      const nm = plant.breakaway![j]!; // [N m]
      const expected = [motorDuty(truth, j, nm, 0), -motorDuty(truth, j, -nm, 0)];
      for (const k of [0, 1])
        expect(Math.abs(d[k]! / expected[k]! - 1), `joint ${j + 1} ${k ? 'cw' : 'ccw'}: ${d[k]} vs ${expected[k]}`).toBeLessThan(0.25);
    }
    // The file it wrote loads, with the pair.
    expect(loadRig(out).motors.map((m) => m.breakawayDuty?.length)).toEqual([2, 2]);
  });

  // The play sweep (each joint slowly through hanging): the play written where the run's backlash
  // inverse reads it, encoders[j].backlashDeg, within 0.3 deg of the plant's. Joint 2's light link shows
  // its play as a 0.01 N m step, measured since the sweep's fit leaves out the breakaway's transients and
  // the rattle (docs/setup-flaws.md).
  const playWritten = (j: number): void => {
    const play = playStep();
    expect(play?.status, JSON.stringify(play)).not.toBe('fail');
    expect(play?.evidence[`joint${j + 1}`], JSON.stringify(play)).toBeDefined();
    expect(
      json.changes.map((c) => c.field),
      JSON.stringify(play),
    ).toContain(`encoders[${j}].backlashDeg`);
    const e = enc();
    expect(
      Math.abs(e[j]!.backlashDeg! - (plant.backlash![j]! * 180) / Math.PI),
      `joint ${j + 1} play ${e[j]!.backlashDeg} deg`,
    ).toBeLessThan(0.3);
    expect(loadRig(out).encoders[j]!.backlash).toBeCloseTo((e[j]!.backlashDeg! * Math.PI) / 180, 9);
  };
  it("joint 2's play in encoders[1].backlashDeg, within 0.3 deg of the plant's", () => playWritten(1));
  // Joint 1's was undetermined (0.29 +- 0.49 deg) while setup's identified masses raised joint 1's
  // derivative gain to where the loop rang through the play; the sweeps now run with it capped at the
  // motor side's (src/identify/flaws.ts sweepRig). Over plant.seed 1-4 setup writes 1.51-1.53 deg
  // (docs/setup-flaws.md); this test runs the rig file's own.
  it("joint 1's play in encoders[0].backlashDeg, within 0.3 deg of the plant's", () => playWritten(0));
});
