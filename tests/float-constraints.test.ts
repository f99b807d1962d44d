// Issue 32, item 4: a float constraint (--constrain) is checked before anything moves. A line or circle
// outside the arm's reach (a length typed in millimetres), through a place the joint limits forbid, or
// not passing near the endpoint where the arm starts, is refused with the reach named (exit 2), and on a
// board, where the start pose is known only once it answers, the law refuses to float at entry (a fault
// before the float torque is applied). `--mode float` takes no trajectory to follow.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import {
  CONSTRAINT_NEAR_M,
  constraintDistance,
  constraintIssue,
  FloatLaw,
  floatSettings,
  type FloatConstraint,
} from '../src/control/float.js';
import { endpoint } from '../src/model/kinematics.js';
import type { TwoLinkParams } from '../src/model/types.js';
import { virtualRun } from '../src/run/virtual.js';
import { F } from '../src/telemetry/tick.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { twolink } from './helpers/cli.js';

const RIG = 'rigs/mock-arm-identified.json';
const rig = loadRig(RIG);
const arm = rig.arm as TwoLinkParams;
const DEG = Math.PI / 180;
const line = (x0: number, y0: number, x1: number, y1: number): FloatConstraint => ({ kind: 'line', from: [x0, y0], to: [x1, y1] });
const START = rig.plant!.start; // hanging: [-90, 0] deg, the endpoint at (0, -0.55) m

describe('constraintIssue (src/control/float.ts)', () => {
  it('names the reach for points out of it (a length typed in millimetres) and a circle beyond it', () => {
    expect(constraintIssue(rig, line(300, -300, 300, 100))).toMatch(
      /the point \(300, -300\) m is 424\.3 m from joint 1, out of reach: the arm reaches from 0\.05 to 0\.55 m/,
    );
    expect(constraintIssue(rig, line(10, 0, 10, 1))).toMatch(/\(10, 0\) m is 10 m from joint 1, out of reach/);
    expect(constraintIssue(rig, { kind: 'circle', centre: [0, 0], radius: 100 })).toMatch(
      /the circle spans 100 to 100 m from joint 1, beyond the reach: the arm reaches from 0\.05 to 0\.55 m/,
    );
    expect(constraintIssue(rig, { kind: 'circle', centre: [2, 0], radius: 0.1 })).toMatch(/beyond the reach/);
    expect(constraintIssue(rig, { kind: 'circle', centre: [0.3, 0], radius: 0 })).toMatch(/not a circle/);
    expect(constraintIssue(rig, line(0.3, 0, 0.3, 0.0005))).toMatch(/the same/);
  });

  it('refuses a path through a place the joint limits forbid (elbow folded past 160 deg)', () => {
    expect(constraintIssue(rig, { kind: 'circle', centre: [0.2, 0], radius: 0.1 })).toMatch(/cannot reach within its joint limits/);
  });

  it('with the start pose: the constraint must pass within 10 mm of the endpoint there', () => {
    const p = endpoint(arm, START);
    expect(constraintIssue(rig, line(0.3, -0.3, 0.3, 0.1), START)).toMatch(
      /the line passes 300 mm from the endpoint at the start pose \(0, -0\.55\) m/,
    );
    expect(constraintIssue(rig, line(0.3, -0.3, 0.3, 0.1))).toBeUndefined(); // reachable; only the start rules it out
    expect(constraintIssue(rig, line(p[0], p[1], 0.3, -0.4), START)).toBeUndefined();
    const near = line(0, p[1] + 0.9 * CONSTRAINT_NEAR_M, 0.1, p[1] + 0.9 * CONSTRAINT_NEAR_M + 0.011);
    expect(constraintDistance(near, p)).toBeLessThan(CONSTRAINT_NEAR_M);
    expect(constraintIssue(rig, near, START)).toBeUndefined();
  });
});

describe('twolink run --mode float --constrain: refused before motion, exit 2, the reach named', () => {
  const run = (c: string): Promise<Awaited<ReturnType<typeof twolink>>> =>
    twolink(['run', '--rig', RIG, '--mock', '--mode', 'float', '--constrain', c, '--max-seconds', '1', '--json']);
  const cases: [string, RegExp][] = [
    [
      'line:300,-300,300,100',
      /--constrain "line:300,-300,300,100": the point \(300, -300\) m is 424\.3 m from joint 1, out of reach: the arm reaches from 0\.05 to 0\.55 m from joint 1 \(the numbers are metres\)/,
    ],
    ['line:10,0,10,1', /out of reach: the arm reaches from 0\.05 to 0\.55 m/],
    ['circle:0,0,100', /beyond the reach: the arm reaches from 0\.05 to 0\.55 m/],
    ['line:0.3,-0.3,0.3,0.1', /passes 300 mm from the endpoint at the start pose/],
    ['line:0x1,0,0,1', /write line:x0,y0,x1,y1/],
    ['line:,,,1', /write line:x0,y0,x1,y1/],
  ];
  for (const [c, msg] of cases) {
    it(c, async () => {
      const r = await run(c);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).not.toMatch(/connected|real-time scheduling/); // nothing was opened
      expect(r.stdout).toBe('');
    });
  }

  it('--mode float --traj reach is refused (float follows no trajectory)', async () => {
    const r = await twolink(['run', '--rig', RIG, '--mock', '--mode', 'float', '--traj', 'reach']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--mode float --traj reach: float follows no trajectory.*give --traj hold, the default with --mode float/);
  });

  it(
    'a line through the start pose floats and ends done',
    async () => {
      const p = endpoint(arm, START);
      const r = await twolink([
        'run',
        '--rig',
        RIG,
        '--mock',
        '--mode',
        'float',
        '--constrain',
        `line:${p[0].toFixed(4)},${p[1].toFixed(4)},0.3,-0.4`,
        '--max-seconds',
        '2',
        '--json',
        '--headless',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!).stop.kind).toBe('done');
    },
    hangGuardMs(30_000),
  );
});

describe('the law at float entry (a board: the start pose known only when it answers)', () => {
  it(
    'a constraint far from the endpoint is a fault at entry: no float torque, the arm does not move',
    async () => {
      const law = new FloatLaw(rig, floatSettings(rig, { constraint: line(0.3, -0.3, 0.3, 0.1) }));
      const truth: number[][] = [];
      const r = await virtualRun(rig, [{ name: 'hold', description: 'hold', start: {}, steps: [{ kind: 'hold', duration: 2 }] }], {
        controller: law,
        park: false,
        maxSeconds: 5,
        onTick: (_core, _clock, mock) => truth.push([...mock.plant.q]),
      });
      expect(r.summary.stop.kind).toBe('fault');
      expect(r.summary.stopReason).toMatch(/float: the endpoint is 300 mm from the line constraint as float begins \(at most 10 mm\)/);
      expect(r.rows.some((row) => row[F.float]! > 0)).toBe(false);
      for (const q of truth) for (let i = 0; i < 2; i++) expect(Math.abs(q[i]! - START[i]!) / DEG).toBeLessThan(0.5);
    },
    hangGuardMs(20_000),
  );
});
