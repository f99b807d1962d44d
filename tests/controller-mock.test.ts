// Users' controllers in the real loop against the mock rig, in virtual time: the shipped examples
// complete the reach and the circle; a controller that throws, returns NaN, returns three torques or
// is slower than the period stops the arm with a fault that names the file, and the motors end at 0.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { F } from '../src/telemetry/tick.js';
import { loadRig } from '../src/config/load.js';
import { builtinPath } from '../src/model/builtins.js';
import { virtualRun } from '../src/run/virtual.js';

const rig = loadRig('rigs/mock-arm.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-controller-mock-'));
const write = (name: string, body: string): string => {
  const f = join(dir, name);
  writeFileSync(f, body);
  return relative(process.cwd(), f);
};
const run = (controller: string, traj = 'reach') => virtualRun(rig, [builtinPath(rig.arm, traj)!], { controller, maxSeconds: 60 });

describe('the example controllers on the mock rig', () => {
  const cases: [string, string, number][] = [
    // [file, trajectory, tracking RMS bound [deg] per joint]
    ['examples/controllers/pd-gravity.js', 'reach', 3],
    ['examples/controllers/pd-gravity.js', 'circle', 3],
    ['examples/controllers/impedance.js', 'reach', 3],
    ['examples/controllers/impedance.js', 'circle', 3],
  ];
  for (const [file, traj, bound] of cases) {
    it(`${file} runs the ${traj} to the end`, async () => {
      const r = await run(file, traj);
      expect(r.summary.stop).toEqual({ kind: 'done' });
      expect(r.summary.tracking.samples).toBeGreaterThan(100);
      for (const e of r.summary.tracking.rmsDeg) expect(e).toBeLessThan(bound);
      // twolink's limits stay around the law: no commanded torque beyond the rig's limits.
      for (const row of r.rows) {
        expect(Math.abs(row[F.tauCmd0]!)).toBeLessThanOrEqual(rig.limits[0]!.maxTorque + 1e-9);
        expect(Math.abs(row[F.tauCmd1]!)).toBeLessThanOrEqual(rig.limits[1]!.maxTorque + 1e-9);
      }
    });
  }

  it("the law's torques are what the loop commands (within the limits, after the soft start)", async () => {
    // A constant holding torque: G at the hanging pose is 0, so 0.05 N m on each joint is what reaches the motors.
    const file = write('constant.js', 'export default () => ({ update: () => [0.05, -0.03] });');
    // (a law that does not follow the plan at all: no following-error limit, or it would stop the arm)
    const free = { ...rig, limits: rig.limits.map((l) => ({ ...l, followingError: Math.PI })) };
    const r = await virtualRun(free, [builtinPath(rig.arm, 'point')!], { controller: file, maxSeconds: 5 });
    const tracking = r.rows.filter((row) => row[F.phase] === 2);
    expect(tracking.length).toBeGreaterThan(10);
    for (const row of tracking.slice(-5)) {
      expect(row[F.tauCmd0]).toBeCloseTo(0.05, 9);
      expect(row[F.tauCmd1]).toBeCloseTo(-0.03, 9);
    }
  });
});

describe('a misbehaving controller stops the arm with a fault naming the file', () => {
  const bad: [string, string, RegExp][] = [
    [
      'throws.js',
      "let n = 0; export default () => ({ update() { if (++n > 20) throw new Error('table index out of range'); return [0, 0]; } });",
      /^[^ ]*throws\.js: update threw: table index out of range/,
    ],
    [
      'nan.js',
      'let n = 0; export default () => ({ update: () => (++n > 20 ? [NaN, 0] : [0, 0]) });',
      /^[^ ]*nan\.js: update returned NaN as the torque of joint 1/,
    ],
    ['three.js', 'export default () => ({ update: () => [0, 0, 0] });', /^[^ ]*three\.js: update returned 3 torques for a 2-joint arm/],
    [
      'slow.js',
      // 5 ms of its own: wall time less what the OS kept this thread waiting (its run-queue delay, the
      // second field of /proc/thread-self/schedstat), as the loop judges it; a busy-wait on the wall
      // clock alone is mostly the OS's time under six CPU hogs, and the loop rightly does not blame that.
      "import { readFileSync } from 'node:fs'; const waited = () => Number(readFileSync('/proc/thread-self/schedstat', 'latin1').split(' ')[1]) / 1e6; export default () => ({ update() { const t0 = performance.now(), w0 = waited(); while (performance.now() - t0 - (waited() - w0) < 5) {} return [0, 0]; } });",
      /^[^ ]*slow\.js: update took \d+\.\d\d ms( \(not counting \d+\.\d\d ms the operating system kept its thread waiting\))?, longer than the loop period of 2\.00 ms, 3 ticks in a row/,
    ],
  ];
  for (const [name, body, reason] of bad) {
    it(name, async () => {
      const r = await run(write(name, body));
      expect(r.summary.stop).toEqual({ kind: 'fault', fault: { kind: 'controller', message: expect.stringMatching(reason) } });
      expect(r.mock.plant.duty).toEqual([0, 0]);
      const last = r.rows.at(-1)!;
      expect([last[F.duty0], last[F.duty1]]).toEqual([0, 0]);
    });
  }
});
