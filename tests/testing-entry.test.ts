// `twolink/testing`, the entry for users' own test suites: a trajectory with a controller against the
// mock in virtual time, the summary and the ticks back. Also that the package's "exports" map resolves
// it for a user's code (node, from the built package).
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MOCK_RIG_FILE, mockRig, virtualRun } from '../src/testing.js';
import { ROOT } from './helpers/cli.js';

describe('twolink/testing', () => {
  it('mockRig() is the built-in mock arm, with its plant', () => {
    const rig = mockRig();
    expect(rig.name).toBe('mock-arm');
    expect(rig.plant).toBeDefined();
    expect(MOCK_RIG_FILE.endsWith('rigs/mock-arm.json')).toBe(true);
  });

  it('mockRig refuses a rig file without a plant, naming the file', () => {
    expect(() => mockRig('rigs/bench-arm.json')).toThrow(/^rigs\/bench-arm\.json: no "plant" section/);
  });

  it('virtualRun with a controller: the summary and every tick', async () => {
    const run = await virtualRun({ traj: 'reach', controller: 'examples/controllers/pd-gravity.js' });
    expect(run.summary.stop).toEqual({ kind: 'done' });
    expect(run.ticks.length).toBe(run.summary.ticks);
    const tracking = run.ticks.filter((t) => t.phase === 'track');
    expect(tracking.length).toBe(run.summary.tracking.samples);
    // The ticks carry what the summary is computed from: its RMS tracking error, recomputed.
    const rms = [0, 1].map((j) =>
      Math.sqrt(tracking.reduce((s, t) => s + (((t.des.q[j]! - t.meas.q[j]!) * 180) / Math.PI) ** 2, 0) / tracking.length),
    );
    expect(rms[0]).toBeCloseTo(run.summary.tracking.rmsDeg[0]!, 9);
    expect(rms[1]).toBeCloseTo(run.summary.tracking.rmsDeg[1]!, 9);
    expect(run.events.some((e) => e.kind === 'trajectory' && e.phase === 'track')).toBe(true);
  });

  it('injections as text, as on the command line, or parsed; a silent board ends in the link-lost fault', async () => {
    const run = await virtualRun({ rig: 'rigs/mock-arm.json', traj: ['point'], injections: ['silent@0.5'] });
    expect(run.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'link-lost' } });
    const parsed = await virtualRun({ rig: 'rigs/mock-arm.json', traj: ['point'], injections: [{ name: 'silent', at: 0.5 }] });
    expect(parsed.summary.ticks).toBe(run.summary.ticks);
  });

  it('`faults`, the old name of `injections`, still works; a parsed one is checked as text is', async () => {
    const run = await virtualRun({ rig: 'rigs/mock-arm.json', traj: ['point'], faults: ['silent@0.5'] });
    expect(run.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'link-lost' } });
    await expect(virtualRun({ traj: 'point', injections: [{ name: 'stall', value: '5', at: 0 }] })).rejects.toThrow(
      /^--inject "stall=5@0": the joint "5" must be 1\.\.2/,
    );
  });

  it('an unknown trajectory is a clear error', async () => {
    await expect(virtualRun({ traj: 'wave' })).rejects.toThrow(
      /^traj "wave": not a built-in trajectory of this arm \(reach, point, circle\) nor a \.json file$/,
    );
  });

  it("the package's exports map serves 'twolink/testing' to a user's code (built package)", async () => {
    const code =
      "import('twolink/testing').then((m) => console.log(JSON.stringify([typeof m.virtualRun, typeof m.mockRig, m.mockRig().name])))";
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT });
      let s = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (s += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (c) => (c === 0 ? resolve(s) : reject(new Error(err))));
    });
    expect(JSON.parse(out)).toEqual(['function', 'function', 'mock-arm']);
  });
});
