// The float, teach and replay interface refuses what it cannot do before anything moves: exit code 2
// and a line that names the argument (or the trajectory's time and joint).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rigFileSha256 } from '../src/config/rig-hash.js';
import { twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-teach-cli-'));
const RIG = ['--rig', 'rigs/mock-arm-identified.json'];

describe('run --mode / --speed / --lock / --constrain and teach refuse bad input', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'a spring without impedance mode',
      ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--stiffness', '200'],
      /--stiffness, --damping-ratio and --space are for --mode impedance/,
    ],
    ['an unknown mode', ['run', ...RIG, '--mock', '--mode', 'limp'], /--mode/],
    ['a speed beyond 2', ['run', ...RIG, '--mock', '--speed', '3'], /--speed/],
    ['--lock without float', ['run', ...RIG, '--mock', '--lock', '1'], /--lock and --constrain are for --mode float/],
    ['a joint the arm lacks', ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--lock', '3'], /--lock/],
    [
      'a constraint that is not one',
      ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--constrain', 'circle:0.3,x,0.1'],
      /--constrain "circle:0.3,x,0.1": write line/,
    ],
    [
      'a circle out of reach',
      ['run', ...RIG, '--mock', '--mode', 'float', '--traj', 'hold', '--constrain', 'circle:2,0,0.1'],
      /beyond the reach: the arm reaches from/,
    ],
    [
      'float with a controller',
      ['run', ...RIG, '--mock', '--mode', 'float', '--controller', 'examples/controllers/pd-gravity.js'],
      /drop --controller/,
    ],
    [
      'a hand without the mock',
      ['teach', ...RIG, '--port', '/dev/null', '--hand', 'circle', '--out', join(dir, 'a.json')],
      /--hand needs --mock/,
    ],
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
      writeFileSync(
        file,
        JSON.stringify({
          name: 'fast',
          start: { q: q[0] },
          steps: [{ samples: { dt: 0.02, q } }],
          taught: { rig: 'x', target: 'mock', recordedS: 0.4, rateHz: 500, smoothingHz: 4, slowdown: 1 },
        }),
      );
      const r = await twolink(['replay', file, ...RIG, '--mock', '--speed', '2', '--json'], { timeoutMs: 10_000 });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/at --speed 2 at t = \d+\.\d{3} s, joint \d/);
    },
    hangGuardMs(10_000),
  );

  describe('replay checks the rig the file was taught on (its content hash)', () => {
    /** A slow taught motion whose `taught` section says `rig` and, when given, its hash. */
    const taughtFile = (name: string, taught: Record<string, unknown>): string => {
      const q = Array.from({ length: 11 }, (_, k) => [-90 + k, 0]);
      const file = join(dir, name);
      writeFileSync(
        file,
        JSON.stringify({
          name,
          start: { q: q[0] },
          steps: [{ samples: { dt: 0.05, q } }],
          taught: { target: 'mock', recordedS: 0.5, rateHz: 500, smoothingHz: 4, slowdown: 1, ...taught },
        }),
      );
      return file;
    };
    // --speed 3 is refused after the rig check and before anything moves: a run that gets to it passed the check.
    const replay = (file: string, rig: string, ...extra: string[]) =>
      twolink(['replay', file, '--rig', rig, '--mock', '--speed', '3', ...extra], { timeoutMs: 10_000 });

    it(
      'a file taught on another rig is refused before motion, naming both rigs, unless --any-rig',
      async () => {
        const file = taughtFile('other.json', {
          rig: 'rigs/mock-arm-identified.json',
          rigSha256: rigFileSha256('rigs/mock-arm-identified.json'),
        });
        const r = await replay(file, 'rigs/mock-arm.json');
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          /other\.json was taught on rigs\/mock-arm-identified\.json \(rig hash [0-9a-f]{12}\), and rigs\/mock-arm\.json is another rig \(hash [0-9a-f]{12}\).*give --any-rig/,
        );
        const any = await replay(file, 'rigs/mock-arm.json', '--any-rig');
        expect(any.stderr).toMatch(/--any-rig: .*replaying it on rigs\/mock-arm\.json as asked/);
        expect(any.stderr).toMatch(/--speed/); // past the check, stopped by the next argument
        const same = await replay(file, 'rigs/mock-arm-identified.json');
        expect(same.stderr).not.toMatch(/taught on/);
        expect(same.stderr).toMatch(/--speed/);
      },
      hangGuardMs(30_000),
    );

    it(
      'a file taught before the hash was written replays with a warning that it cannot tell',
      async () => {
        const r = await replay(taughtFile('old.json', { rig: 'rigs/mock-arm-identified.json' }), 'rigs/mock-arm.json');
        expect(r.stderr).toMatch(/WARNING: .*old\.json was taught on rigs\/mock-arm-identified\.json before twolink wrote the rig's hash/);
        expect(r.stderr).toMatch(/--speed/);
      },
      hangGuardMs(10_000),
    );

    it('the hash ignores the name, the description and formatting, and sees any number', () => {
      const base = JSON.parse(readFileSync('rigs/mock-arm.json', 'utf8')) as Record<string, unknown> & { arm: { L1: number } };
      const a = join(dir, 'a-rig.json');
      const b = join(dir, 'b-rig.json');
      writeFileSync(a, JSON.stringify(base));
      writeFileSync(b, JSON.stringify({ ...base, name: 'renamed', description: 'other words' }, null, 4));
      expect(rigFileSha256(a)).toBe(rigFileSha256(b));
      writeFileSync(b, JSON.stringify({ ...base, arm: { ...base.arm, L1: base.arm.L1 + 0.001 } }));
      expect(rigFileSha256(a)).not.toBe(rigFileSha256(b));
    });
  });

  it(
    "a trajectory file the path cannot be built from is refused naming the file and the step's field (not the builder's 'step 2')",
    async () => {
      const samples = join(dir, 'samples-off.json');
      writeFileSync(
        samples,
        JSON.stringify({
          start: { q: [0, 0] },
          steps: [
            { hold: 1 },
            {
              samples: {
                dt: 0.02,
                q: [
                  [5, 0],
                  [1, 1],
                ],
              },
            },
          ],
        }),
      );
      const a = await twolink(['replay', samples, ...RIG, '--mock'], { timeoutMs: 10_000 });
      expect(a.code, a.stderr).toBe(2);
      expect(a.stderr).toMatch(/samples-off\.json: steps\[1\]\.samples: the first sample must be where the step starts/);
      const line = join(dir, 'line-far.json');
      writeFileSync(line, JSON.stringify({ start: { q: [0, 0] }, steps: [{ hold: 1 }, { line: [5, 5], duration: 1 }] }));
      const b = await twolink(['run', '--traj', line, ...RIG, '--mock'], { timeoutMs: 10_000 });
      expect(b.code, b.stderr).toBe(2);
      expect(b.stderr).toMatch(/line-far\.json: steps\[1\]\.line: the line to \(5\.000, 5\.000\) m leaves the workspace/);
    },
    hangGuardMs(20_000),
  );
});
