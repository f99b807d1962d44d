// The calculator CLI as users and scripts call it: JSON on stdout, exit code 2 with a one-line error
// that names the argument.
import { describe, expect, it } from 'vitest';
import { lastJson, twolink } from './helpers/cli.js';

const SEED = 'rigs/seed-arm.json';

describe('twolink model', () => {
  it('id prints tau, M, V, G; tau equals M qdd + V + G', async () => {
    const r = await twolink(['model', 'id', '--rig', SEED, '--q', '0.3,0.5', '--qd=-1,2', '--qdd', '0.5,-0.25']);
    expect(r.code).toBe(0);
    const o = lastJson(r);
    const qdd = [0.5, -0.25] as const;
    for (let i = 0; i < 2; i++) {
      expect(o.tau[i]).toBeCloseTo(o.M[i][0] * qdd[0] + o.M[i][1] * qdd[1] + o.V[i] + o.G[i], 12);
    }
  });

  it('fd inverts id', async () => {
    const id = lastJson(await twolink(['model', 'id', '--rig', SEED, '--q', '0.3,0.5', '--qd=-1,2', '--qdd', '0.5,-0.25']));
    const r = await twolink(['model', 'fd', '--rig', SEED, '--q', '0.3,0.5', '--qd', '-1,2', `--tau=${id.tau.join(',')}`]);
    expect(r.code).toBe(0);
    const o = lastJson(r);
    expect(o.qdd[0]).toBeCloseTo(0.5, 10);
    expect(o.qdd[1]).toBeCloseTo(-0.25, 10);
  });

  it('fk and ik agree, in degrees too; elbow up and down give the two solutions', async () => {
    const fk = lastJson(await twolink(['model', 'fk', '--rig', SEED, '--q', '20,70', '--deg']));
    expect(fk.elbow[0]).toBeCloseTo(0.5 * Math.cos((20 * Math.PI) / 180), 12);
    const down = lastJson(await twolink(['model', 'ik', '--rig', SEED, `--xy=${fk.endpoint.join(',')}`, '--deg']));
    expect(down.q[0]).toBeCloseTo(20, 9);
    expect(down.q[1]).toBeCloseTo(70, 9);
    const up = lastJson(await twolink(['model', 'ik', '--rig', SEED, `--xy=${fk.endpoint.join(',')}`, '--elbow', 'up', '--deg']));
    expect(up.q[1]).toBeCloseTo(-70, 9);
  });

  it('ik of an unreachable point: exit code 2 and a one-line error that says the reach', async () => {
    const r = await twolink(['model', 'ik', '--rig', SEED, '--xy', '1.5,0']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/out of reach: it is 1.5 m from joint 1, and the arm reaches from 0 m .* to 1 m/);
  });

  it('jacobian prints J and its determinant L1 L2 sin(a2)', async () => {
    const o = lastJson(await twolink(['model', 'jacobian', '--rig', SEED, '--q', '0.2,0.9', '--qd', '1,1']));
    expect(o.det).toBeCloseTo(0.25 * Math.sin(0.9), 12);
    expect(o.J[0][1]).toBeCloseTo(-0.5 * Math.sin(1.1), 12);
    expect(o.Jdot).toHaveLength(2);
  });

  it('bad arguments: exit code 2 and a message naming the argument', async () => {
    const cases: [string[], RegExp][] = [
      [['model', 'id', '--rig', SEED, '--q', '0,x', '--qd', '0,0', '--qdd', '0,0'], /--q: "x"/],
      [['model', 'id', '--rig', SEED, '--q', '0', '--qd', '0,0', '--qdd', '0,0'], /--q: expected 2 comma-separated numbers, got 1/],
      [['model', 'id', '--rig', SEED, '--qd', '0,0', '--qdd', '0,0'], /--q is required/],
      [['model', 'ik', '--rig', SEED, '--xy', '0.5,0.5', '--elbow', 'left'], /--elbow: "left" is not one of down, up/],
      [['model', 'fk', '--rig', SEED, '--q', '0,0', '--qx', '1'], /Unknown option '--qx'/],
      [['model', 'id', '--rig', 'rigs/nope.json', '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'], /rigs\/nope.json: no such file/],
      [['model', 'spin'], /unknown subcommand "spin"/],
      [['sim', '--rig', SEED, '--q0', '0,0', '--duration', '-1'], /--duration: -1 s is out of range/],
      [['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1', '--integrator', 'verlet'], /--integrator: "verlet" is not one of rk4/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ];
    for (const [args, re] of cases) {
      const r = await twolink(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(re);
    }
  });

  it('--help for the program and for each command', async () => {
    const r = await twolink(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/twolink model/);
    for (const c of [
      ['model', 'id', '--help'],
      ['sim', '--help'],
      ['traj', '--help'],
    ]) {
      const h = await twolink(c);
      expect(h.code).toBe(0);
      expect(h.stdout).toMatch(/usage: twolink/);
    }
  });
});

describe('twolink sim and traj', () => {
  it('sim: the last line is the final state; RK4 keeps the energy of a free double pendulum', async () => {
    const start = lastJson(await twolink(['model', 'fk', '--rig', SEED, '--q=-1.2,0.5']));
    const r = await twolink(['sim', '--rig', SEED, '--q0=-1.2,0.5', '--duration', '2']);
    expect(r.code).toBe(0);
    const o = lastJson(r);
    expect(o.t).toBeCloseTo(2, 9);
    expect(o.q).toHaveLength(2);
    expect(Math.abs(o.energy - start.energy.total)).toBeLessThan(1e-6 * Math.abs(start.energy.total) + 1e-9);
  });

  it('sim --out writes an NDJSON trajectory that ends at the printed final state', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const out = `${mkdtempSync(`${tmpdir()}/twolink-`)}/sim.ndjson`;
    const r = await twolink(['sim', '--rig', SEED, '--q0=-1.5,0', '--duration', '0.5', '--torque', '1,0', '--out', out, '--rate', '100']);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(51);
    expect(lines.at(-1).q).toEqual(lastJson(r).q);
  });

  it('traj: one sample per line at the rate, from the start to the end', async () => {
    const r = await twolink([
      'traj',
      '--rig',
      SEED,
      '--space',
      'endpoint',
      '--from',
      '0.98,0',
      '--to',
      '0.5,0.5',
      '--duration',
      '1',
      '--rate',
      '50',
    ]);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(51);
    expect(lines[0].endpoint[0]).toBeCloseTo(0.98, 12);
    expect(lines[50].endpoint[0]).toBeCloseTo(0.5, 12);
    expect(lines[50].endpoint[1]).toBeCloseTo(0.5, 12);
    for (const l of lines) for (const k of ['q', 'qd', 'qdd']) for (const v of l[k]) expect(Number.isFinite(v)).toBe(true);
  });

  it("traj refuses seed 002's exact reach (straight elbow at t = 0) with exit code 2", async () => {
    const r = await twolink([
      'traj',
      '--rig',
      SEED,
      '--space',
      'endpoint',
      '--from',
      '1,0',
      '--to',
      '0.5,0.5',
      '--duration',
      '1',
      '--rate',
      '50',
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/straight-elbow singularity at t = 0.000 s/);
  });

  it('traj in joint space with via points, degrees', async () => {
    const r = await twolink([
      'traj',
      '--rig',
      SEED,
      '--space',
      'joint',
      '--from',
      '0,0',
      '--via',
      '30,30',
      '--to',
      '60,0',
      '--duration',
      '0.5',
      '--rate',
      '10',
      '--deg',
    ]);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(11);
    expect(lines[5].q[0]).toBeCloseTo(30, 9);
    expect(lines[5].qd[0]).toBeCloseTo(0, 9);
    expect(lines[10].q[0]).toBeCloseTo(60, 12);
    expect(lines[10].q[1]).toBeCloseTo(0, 12);
  });
});

describe('package', () => {
  it('the version in src/version.ts is the one in package.json, and the public API loads without serial I/O', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    const api = await import('../src/index.js');
    expect(api.VERSION).toBe(pkg.version);
    expect(typeof api.computeInverseDynamics).toBe('function');
    expect(typeof api.readRecording).toBe('function');
  });
});
