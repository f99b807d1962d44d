// The float, teach and replay interface refuses what it cannot do before anything moves: exit code 2
// and a line that names the argument (or the trajectory's time and joint).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-teach-cli-'));
const RIG = ['--rig', 'rigs/mock-arm-identified.json'];

describe('run --mode / --speed / --lock / --constrain and teach refuse bad input', () => {
  const cases: [string, string[], RegExp][] = [
    ['a spring without impedance mode', ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--stiffness', '200'], /--stiffness, --damping-ratio and --space are for --mode impedance/],
    ['an unknown mode', ['run', ...RIG, '--mock', '--mode', 'limp'], /--mode/],
    ['a speed beyond 2', ['run', ...RIG, '--mock', '--speed', '3'], /--speed/],
    ['--lock without float', ['run', ...RIG, '--mock', '--lock', '1'], /--lock and --constrain are for --mode float/],
    ['a joint the arm lacks', ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--lock', '3'], /--lock/],
    ['a constraint that is not one', ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--constrain', 'circle:0.3,x,0.1'], /--constrain "circle:0.3,x,0.1": write line/],
    ['a circle out of reach', ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--constrain', 'circle:2,0,0.1'], /beyond the reach: the arm reaches from/],
    ['float with a controller', ['run', ...RIG, '--mock', '--mode', 'float', '--controller', 'examples/controllers/pd-gravity.js'], /drop --controller/],
    ['a hand without the mock', ['teach', ...RIG, '--port', '/dev/null', '--hand', 'circle', '--out', join(dir, 'a.json')], /--hand needs --mock/],
    ['an unknown hand path', ['teach', ...RIG, '--mock', '--hand', 'spiral', '--out', join(dir, 'b.json')], /hand path "spiral"/],
    ['teach without --out', ['teach', ...RIG, '--mock'], /--out/],
    ['replay without a file', ['replay', ...RIG, '--mock'], /give the taught trajectory file first/],
  ];
  it.each(cases)(
    '%s',
    async (_what, args, message) => {
      const r = await twolink(args, { timeoutMs: 10_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    },
    hangGuardMs(10_000),
  );

  it(
    'a taught file too fast for the motors at --speed 2 is refused with the time and the joint',
    async () => {
      // joint 2 over 100 deg in 0.4 s: 250 deg/s at speed 1 (within 540), beyond at 2x with the acceleration
      const q: number[][] = [];
      for (let k = 0; k <= 20; k++) q.push([0, 100 * (0.5 - 0.5 * Math.cos((Math.PI * k) / 20))]);
      const file = join(dir, 'fast.json');
      writeFileSync(file, JSON.stringify({ name: 'fast', start: { q: q[0] }, steps: [{ samples: { dt: 0.02, q } }], taught: { rig: 'x', target: 'mock', recordedS: 0.4, rateHz: 500, smoothingHz: 4, slowdown: 1 } }));
      const r = await twolink(['replay', file, ...RIG, '--mock', '--speed', '2', '--json'], { timeoutMs: 10_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/at --speed 2 at t = \d+\.\d{3} s, joint \d/);
    },
    hangGuardMs(10_000),
  );
});
