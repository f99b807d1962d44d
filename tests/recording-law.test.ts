// The law is recorded (issue 35, item 3): the header names the control law the run used (twolink's
// feedforward + PID with its gains, a user's controller by its file and the SHA-256 of its content,
// float or impedance mode with their parameters) and `compare` labels each run by it. Recordings made
// before the field still read: "law not recorded". A law of a kind this version does not know reads
// (a newer twolink's); a known kind with a bad field is refused, naming it.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { floatSettings } from '../src/control/float.js';
import { builtinPath } from '../src/model/builtins.js';
import { COMPARE_FIELDS, describeRun, lawText } from '../src/record/compare.js';
import { loadRecording, readRecording } from '../src/record/read.js';
import { runHeader, runLaw } from '../src/run/header.js';
import { virtualRun } from './helpers/virtual-run.js';
import { hangGuardMs } from './helpers/hang-guard.js';

const rig = loadRig('rigs/mock-arm.json');
const point = builtinPath(rig.arm, 'point')!;
const dir = mkdtempSync(join(tmpdir(), 'twolink-law-'));
const CONTROLLER = 'examples/controllers/pd-gravity.js';

async function recorded(name: string, opts: Parameters<typeof virtualRun>[2]): Promise<{ law: unknown; label: string }> {
  const file = join(dir, `${name}.ndjson`);
  await virtualRun(rig, [point], { ...opts, record: file, keepRows: false, maxSeconds: 6 });
  const rec = await loadRecording(file, COMPARE_FIELDS);
  return { law: rec.info.header.law, label: describeRun(rec, 'A').lawText };
}

describe('the header names the law, compare labels the run by it', () => {
  it(
    "feedforward + PID: the feedforward, the observer, the delay compensation and the rig's gains",
    async () => {
      const { law, label } = await recorded('pid', {});
      const pid = rig.control.pid;
      expect(law).toEqual({
        kind: 'pid',
        feedforward: 'desired',
        disturbanceObserver: rig.control.disturbanceObserver,
        predict: true,
        pid: { kp: pid.kp, ki: pid.ki, kd: pid.kd, iLimitNm: pid.iLimitNm, antiWindup: pid.antiWindup },
      });
      expect(label).toBe(
        `feedforward desired + PID (kp ${pid.kp.map((v) => Number(v.toFixed(3))).join('/')} N m/rad, ki ${pid.ki.map((v) => Number(v.toFixed(3))).join('/')} N m/(rad s), kd ${pid.kd.map((v) => Number(v.toFixed(3))).join('/')} N m s/rad)`,
      );
      const none = await recorded('pid-none', { feedforward: 'none', predict: false });
      expect(none.label).toMatch(/^PID alone \(kp .*; no delay compensation\)$/);
    },
    hangGuardMs(60_000),
  );

  it(
    "a user's controller: its file and the SHA-256 of its content",
    async () => {
      const { law, label } = await recorded('controller', { controller: CONTROLLER });
      const sha256 = createHash('sha256').update(readFileSync(CONTROLLER)).digest('hex');
      expect(law).toEqual({ kind: 'controller', file: CONTROLLER, sha256 });
      expect(label).toBe(`controller ${CONTROLLER} (sha256 ${sha256.slice(0, 12)})`);
    },
    hangGuardMs(60_000),
  );

  it(
    'impedance mode: its space, stiffness and damping ratio',
    async () => {
      const { law, label } = await recorded('impedance', { impedance: { space: 'joint', stiffness: 2, dampingRatio: 0.8 } });
      expect(law).toEqual({ kind: 'impedance', space: 'joint', stiffness: 2, dampingRatio: 0.8 });
      expect(label).toBe('impedance (joint space, stiffness 2 N m/rad, damping ratio 0.8)');
    },
    hangGuardMs(60_000),
  );

  it('float mode: its settings, as the header of `run --mode float` has them, read back', async () => {
    const settings = floatSettings(rig, { lock: 1 });
    const header = runHeader({
      rig,
      rateHz: 500,
      feedforward: 'desired',
      target: { kind: 'mock' },
      paths: [point],
      injections: [],
      float: settings,
    });
    expect(header.law).toEqual({ kind: 'float', settings: { ...settings } });
    const file = join(dir, 'float.ndjson');
    // A tick line of the earlier run (events may come before its first tick).
    const tick = readFileSync(join(dir, 'pid.ndjson'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('{') && (JSON.parse(l) as { kind?: string }).kind === 'tick')!;
    writeFileSync(file, `${JSON.stringify(header)}\n${tick}\n`);
    const info = await readRecording(file);
    expect(info.header.law).toEqual(JSON.parse(JSON.stringify(header.law)));
    const cap = settings.torqueCapNm.map((v) => Number(v.toFixed(3))).join('/');
    const speed = settings.speedCapRadS.map((v) => String(Number(((v * 180) / Math.PI).toFixed(0)))).join('/');
    expect(lawText(info.header.law)).toBe(
      `float (friction assist ${settings.frictionAssist}, torque cap ${cap} N m, speed cap ${speed} deg/s; joint 2 locked)`,
    );
  });

  it('runLaw: the law of each mode from the run plan (the session and the virtual run build the header with it)', () => {
    expect(runLaw({ rig, feedforward: 'measured' }).kind).toBe('pid');
    expect(runLaw({ rig, feedforward: 'desired', controller: { code: 'MyLaw' } })).toEqual({ kind: 'code', name: 'MyLaw' });
    expect(lawText({ kind: 'code', name: 'MyLaw' })).toBe('a ControlLaw given in code (MyLaw)');
  });
});

describe('recordings without the law, or with one this version does not know', () => {
  const pidFile = (): string[] => readFileSync(join(dir, 'pid.ndjson'), 'utf8').split('\n');

  it('an older recording (no law in its header) still reads: "law not recorded", with the feedforward its header names', async () => {
    const lines = pidFile();
    const { law: _law, ...old } = JSON.parse(lines[0]!);
    const file = join(dir, 'old.ndjson');
    writeFileSync(file, [JSON.stringify(old), ...lines.slice(1)].join('\n'));
    const rec = await loadRecording(file, COMPARE_FIELDS);
    expect(rec.info.header.law).toBeUndefined();
    expect(describeRun(rec, 'A').lawText).toBe('law not recorded (an older recording; its header names feedforward desired)');
  });

  it('a law of another kind (a newer twolink) reads and is said as such; a known kind with a bad field is refused, naming it', async () => {
    const lines = pidFile();
    const header = JSON.parse(lines[0]!);
    const newer = join(dir, 'newer.ndjson');
    writeFileSync(newer, [JSON.stringify({ ...header, law: { kind: 'mpc', horizon: 20 } }), ...lines.slice(1)].join('\n'));
    const rec = await loadRecording(newer, COMPARE_FIELDS);
    expect(describeRun(rec, 'A').lawText).toBe('law "mpc" (not known to this version of twolink)');
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(
      bad,
      [JSON.stringify({ ...header, law: { kind: 'controller', file: CONTROLLER, sha256: 'abc' } }), ...lines.slice(1)].join('\n'),
    );
    await expect(readRecording(bad)).rejects.toThrow(new RegExp(`^${bad}:1: bad header line: .*law`));
  });
});
