// `twolink run --mode impedance` at the command line: a stiffness the loop's delay does not keep
// passive is refused before anything moves (exit code 2, the bound and the pose), the options are
// checked, and a run on the mock ends with the summary's `impedance` object.
import { describe, expect, it } from 'vitest';
import { lastJson, twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const BASE = ['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'point', '--no-rt'];

describe('twolink run --mode impedance', () => {
  it(
    'refuses 500 N/m on the default mock before motion, with the bound, the pose and the loop timing',
    async () => {
      const r = await twolink([...BASE, '--mode', 'impedance', '--stiffness', '500', '--json']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /--mode impedance: stiffness 500\.0 N\/m is more than the loop keeps passive at alpha = \(-?\d+\.\d, -?\d+\.\d\) deg: at most \d+\.\d N\/m there \(500 Hz, answers 3 sample\(s\) late: T\/2 \+ t_d = 7\.00 ms/,
      );
    },
    hangGuardMs(20_000),
  );

  it(
    'checks its options: a damping ratio out of range, a space that is none, spring options without the mode',
    async () => {
      const zeta = await twolink([...BASE, '--mode', 'impedance', '--damping-ratio', '9']);
      expect(zeta.code).toBe(2);
      expect(zeta.stderr).toMatch(/--damping-ratio/);
      const space = await twolink([...BASE, '--mode', 'impedance', '--space', 'polar']);
      expect(space.code).toBe(2);
      expect(space.stderr).toMatch(/--space/);
      const alone = await twolink([...BASE, '--stiffness', '50']);
      expect(alone.code).toBe(2);
      expect(alone.stderr).toMatch(/are for --mode impedance/);
    },
    hangGuardMs(30_000),
  );

  it(
    "a run on the mock (real time) ends with the summary's impedance object",
    async () => {
      const r = await twolink(
        [
          ...BASE,
          '--mode',
          'impedance',
          '--stiffness',
          '60',
          '--damping-ratio',
          '0.7',
          '--inject',
          'force=1,0@2+10',
          '--no-park',
          '--json',
        ],
        { timeoutMs: 60_000 },
      );
      const s = lastJson(r);
      expect(s.impedance).toMatchObject({ space: 'endpoint', dampingRatio: 0.7 });
      expect(typeof s.impedance.stiffness).toBe('number');
      expect(s.impedance.forceEstimateN === null || s.impedance.forceEstimateN.length === 2).toBe(true);
    },
    hangGuardMs(60_000),
  );

  it(
    '--traj hold (a spring about the pose the arm starts in) runs on the mock and ends done with the zero acknowledged',
    async () => {
      const r = await twolink(
        [
          'run',
          '--rig',
          'rigs/mock-arm.json',
          '--mock',
          '--traj',
          'hold',
          '--max-seconds',
          '5',
          '--no-rt',
          '--mode',
          'impedance',
          '--json',
        ],
        { timeoutMs: 60_000 },
      );
      const s = lastJson(r);
      expect(r.code).toBe(0);
      expect(s.stop).toEqual({ kind: 'done' });
      expect(s.impedance).toMatchObject({ space: 'endpoint' });
    },
    hangGuardMs(60_000),
  );

  it(
    "--traj hold on a real port is checked at every elbow angle the arm may start in: a stiffness passive at the mock's start but not everywhere is refused",
    async () => {
      // On the mock only the plant's start pose is checked (200 N/m is passive there); on a port the
      // arm may start anywhere, and at a straighter elbow 200 N/m is not.
      const mock = await twolink(
        [
          'run',
          '--rig',
          'rigs/mock-arm.json',
          '--mock',
          '--traj',
          'hold',
          '--max-seconds',
          '5',
          '--no-rt',
          '--mode',
          'impedance',
          '--stiffness',
          '200',
          '--json',
        ],
        { timeoutMs: 60_000 },
      );
      expect(mock.stderr).not.toMatch(/more than the loop keeps passive/);
      expect(mock.code).toBe(0);
      expect(lastJson(mock).impedance).toMatchObject({ space: 'endpoint' });
      const r = await twolink([
        'run',
        '--rig',
        'rigs/mock-arm.json',
        '--port',
        '/dev/null',
        '--traj',
        'hold',
        '--no-rt',
        '--mode',
        'impedance',
        '--stiffness',
        '200',
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(
        /--mode impedance: stiffness 200\.0 N\/m is more than the loop keeps passive at alpha = \(0\.0, -?\d+\.\d\) deg/,
      );
    },
    hangGuardMs(20_000),
  );
});
