// Issue 12: rig files that are schema-valid but physically absurd, and files that are not files at all,
// are refused at load, in the main thread, with one line naming the file, the field and the reason.
// The fault probe's cases are fixtures in tests/fixtures/bad-input/.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { plausibilityIssues } from '../src/config/plausible.js';
import { RigFileError } from '../src/config/rig.js';
import { loadTrajectoryFile } from '../src/config/trajectory-file.js';
import { checkFeasible, FeasibilityError } from '../src/control/feasibility.js';
import { jointMinJerk } from '../src/model/trajectory.js';

const FIX = 'tests/fixtures/bad-input';
const dir = mkdtempSync(`${tmpdir()}/twolink-bad-rig-`);

function refusal(file: string): RigFileError {
  try {
    loadRig(file);
  } catch (e) {
    expect(e).toBeInstanceOf(RigFileError);
    const err = e as RigFileError;
    expect(err.message.startsWith(`${file}: `)).toBe(true);
    expect(err.message).not.toContain('\n');
    return err;
  }
  throw new Error(`${file} was loaded`);
}

describe('physically absurd rig files (the fault probe)', () => {
  it.each([
    ['rig-kt-3.json', 'motors[1].kt', /kt 3 N m\/A and ke 0.01 V s\/rad differ by a factor 300/],
    ['rig-kt-9e15.json', 'motors[0].kt', /must be at most 10 \(in SI units/],
    ['rig-friction-1.2e8.json', 'plant.coulomb[0]', /must be at most 10000 N m/],
    ['rig-mass-1.8e308.json', 'arm.m1', /received Infinity/],
    ['rig-deep-nesting.json', 'arm.L1', /expected number, received array \(got \[\[\[\[\.\.\.\]\]\]\]\)/],
    [
      'rig-weak-motor.json',
      'motors[0]',
      /motor gives at most 0.48 N m at stall .* holding the arm against gravity within the joint limits takes 2.37 N m/,
    ],
    [
      'rig-friction-over-motor.json',
      'friction.coulomb[0]',
      /Coulomb friction 5 N m is at least the motor's stall torque 4.8 N m: the joint could never move/,
    ],
    ['rig-stiff-motor.json', 'motors[1]', /back-EMF damping .* time constant of .* the twin's integration \(step 2 ms\) cannot follow it/],
    ['rig-start-outside.json', 'plant.startDeg[0]', /-170 deg is outside the joint limits -150\.\.150 deg/],
    ['rig-observer-fast.json', 'twin.observerHz', /200 Hz is too fast for a loop at 500 Hz/],
  ])('%s: refused at load naming %s', (name, field, re) => {
    const e = refusal(`${FIX}/${name}`);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(re);
  });

  it('every rig that ships passes the plausibility checks with nothing to say', () => {
    for (const f of readdirSync('rigs').filter((x) => x.endsWith('.json'))) expect(plausibilityIssues(loadRig(`rigs/${f}`))).toEqual([]);
  });

  it('a rig file with several problems still gives one line: the first in full, the other fields named', () => {
    const e = refusal(`${FIX}/rig-friction-over-motor.json`);
    expect(e.message).toMatch(/\(and 2 more problems: friction\.coulomb\[1\], limits\[0\]\.maxTorqueNm\)$/);
  });

  it('a value nested 100,000 levels deep anywhere is described without overflowing the stack', () => {
    const f = `${dir}/deep-unknown.json`;
    writeFileSync(
      f,
      JSON.stringify({ arm: { L1: 0.3, L2: 0.25, d1: 0.17, d2: 0.1, m1: 0.6, m2: 0.35, I1: 0.006, I2: 0.0025, g: 9.81 } }).replace(
        '"g":9.81',
        `"g":${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      ),
    );
    expect(refusal(f).message).toMatch(/arm\.g: .*expected number, received array/);
  });
});

describe('Firmata wiring is checked at load from the rig file alone (exit 2 there, not 1 at connect time)', () => {
  it.each([
    ['rig-firmata-not-pwm.json', 'firmata.motors[0].pwm', /pin 4 cannot do PWM on an Uno \(PWM pins: 3 5 6 9 10 11\)/],
    ['rig-firmata-serial-pin.json', 'firmata.motors[0].dir', /pin 1 is the serial line to the laptop on a Mega/],
    ['rig-firmata-no-pin.json', 'firmata.sensors[1].pinB', /pin 80 does not exist on a Mega \(pins 0-69\)/],
    ['rig-firmata-no-section.json', 'firmata', /link\.transport is "firmata" but there is no "firmata" section/],
    ['rig-firmata-unknown-shield.json', 'firmata.motors[0]', /unknown shield "NO_SUCH_SHIELD" \(johnny-five knows ADAFRUIT_V1, /],
  ])('%s: refused naming %s', (name, field, re) => {
    const e = refusal(`${FIX}/${name}`);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(re);
  });

  it('a shield preset whose pins the board does not have is refused; one that fits loads', () => {
    const base = JSON.parse(readFileSync('rigs/mock-arm-firmata.json', 'utf8'));
    const uno = {
      board: 'uno',
      sensors: [
        { type: 'encoder', pinA: 2, pinB: 12 },
        { type: 'encoder', pinA: 3, pinB: 13 },
      ],
    };
    const bad = `${dir}/shield-bad.json`;
    writeFileSync(
      bad,
      JSON.stringify({
        ...base,
        firmata: {
          ...uno,
          motors: [
            { shield: 'SPARKFUN_DUAL_HBRIDGE_EDISON_BLOCK', motor: 'A' },
            { pwm: 9, dir: 8 },
          ],
        },
      }),
    );
    expect(refusal(bad).message).toMatch(
      /firmata\.motors\[0\]: shield SPARKFUN_DUAL_HBRIDGE_EDISON_BLOCK motor A uses pin \d+ for \w+, which an Uno cannot give it/,
    );
    const ok = `${dir}/shield-ok.json`;
    writeFileSync(
      ok,
      JSON.stringify({
        ...base,
        firmata: {
          ...uno,
          motors: [
            { shield: 'DF_ROBOT', motor: 'A' },
            { pwm: 9, dir: 8 },
          ],
        },
      }),
    );
    expect(loadRig(ok).firmata?.motors[0]).toEqual({ shield: 'DF_ROBOT', motor: 'A' });
  });
});

describe('what is not a rig file is refused before it is read', () => {
  it('a FIFO (which would block the read forever)', () => {
    const fifo = `${dir}/fifo.json`;
    execFileSync('mkfifo', [fifo]);
    expect(refusal(fifo).message).toMatch(/is a named pipe \(FIFO\), not a rig file/);
  });

  it('a device that never ends (/dev/zero), a directory, a file over 1 MiB, a missing file', () => {
    expect(refusal('/dev/zero').message).toMatch(/\/dev\/zero: is a character device, not a rig file/);
    const d = `${dir}/a-dir.json`;
    mkdirSync(d);
    expect(refusal(d).message).toMatch(/is a directory, not a rig file/);
    const big = `${dir}/big.json`;
    writeFileSync(big, ' '.repeat(2 << 20));
    expect(refusal(big).message).toMatch(/is larger than 1 MiB, too large for a rig file/);
    expect(refusal(`${dir}/none.json`).message).toMatch(/no such file \(the rig files that ship are in rigs\/\)/);
  });

  it('trajectory files go through the same reader', () => {
    expect(() => loadTrajectoryFile('/dev/zero')).toThrow(/\/dev\/zero: is a character device, not a trajectory file/);
  });

  it("invalid JSON without a position in V8's message still names the line and the column, on one line", () => {
    const f = `${dir}/inf.json`;
    writeFileSync(f, '{\n  "arm": {\n    "L1": Infinity\n  }\n}');
    const e = refusal(f);
    expect(e.message).toMatch(/line 3, column 11: invalid JSON \(Unexpected token 'I'\)/);
  });
});

describe('feasibility messages', () => {
  it('never say "needs 0.00 N m but only 0.00 N m": small torques keep their digits, a motor past its no-load speed says so', () => {
    const rig = loadRig(`${FIX}/rig-no-load-speed.json`);
    const messages: string[] = [];
    for (const d of [0.2, 0.3, 0.5, 0.8, 1.2, 2]) {
      try {
        checkFeasible(rig, jointMinJerk(rig.arm, [-0.5, 0.3], [0.8, -0.2], d), 'a move');
      } catch (e) {
        expect(e).toBeInstanceOf(FeasibilityError);
        messages.push((e as Error).message);
      }
    }
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) {
      expect(m).not.toMatch(/\b0\.00 N m/);
      expect(m).toMatch(/needs \d/);
    }
  });
});
