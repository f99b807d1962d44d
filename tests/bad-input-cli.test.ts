// Issue 12 at the level users meet it: the twolink command. Bad input gets one clear line on stderr
// (`twolink: ...`) and exit code 2: never a stack trace, a hang, or `null` printed as a result.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';
import { lastJson, twolink, type CliResult } from './helpers/cli.js';

const SEED = 'rigs/seed-arm.json';
const MOCK = 'rigs/mock-arm.json';
const REC = 'tests/fixtures/bad-input/recording-ok.ndjson';
const dir = mkdtempSync(`${tmpdir()}/twolink-bad-cli-`);

/** Exit code 2, nothing on stdout, one line on stderr that matches `re`, no stack frames. */
function expectClear(r: CliResult, re: RegExp): void {
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/^twolink: /);
  expect(r.stderr).toMatch(re);
  expect(r.code).toBe(2);
}

describe('output files: one line naming the path', () => {
  it('--record in a folder that does not exist, or a directory: refused before the run starts', async () => {
    expectClear(
      await twolink(['run', '--rig', MOCK, '--mock', '--traj', 'point', '--record', '/nonexistent/x.ndjson']),
      /\/nonexistent\/x\.ndjson: the folder \/nonexistent does not exist/,
    );
    const d = `${dir}/a-dir.ndjson`;
    mkdirSync(d);
    expectClear(
      await twolink(['run', '--rig', MOCK, '--mock', '--traj', 'point', '--record', d]),
      /a-dir\.ndjson: is a directory: give a file name for the recording/,
    );
  });

  it('compare --export csv|mcap --out /dev/full: the disk is full, said once', async () => {
    expectClear(await twolink(['compare', REC, '--export', 'csv', '--out', '/dev/full']), /\/dev\/full: cannot write it: the disk is full/);
    expectClear(
      await twolink(['compare', REC, '--export', 'mcap', '--out', '/dev/full']),
      /\/dev\/full: cannot write it: the disk is full/,
    );
    expectClear(
      await twolink(['compare', REC, '--plot', '/nonexistent/x.svg']),
      /\/nonexistent\/x\.svg: the folder \/nonexistent does not exist/,
    );
  });

  it('sim --out /dev/full and into a missing folder', async () => {
    expectClear(
      await twolink(['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1', '--out', '/dev/full']),
      /\/dev\/full: cannot write it: the disk is full/,
    );
    expectClear(
      await twolink(['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1', '--out', '/nonexistent/s.ndjson']),
      /the folder \/nonexistent does not exist/,
    );
  });

  it(
    'identify --out /dev/full: refused before the arm moves (issue 32: the fit is not lost to it), one line and exit 2',
    async () => {
      const r = await twolink(
        [
          'identify',
          '--rig',
          'rigs/mock-arm-far.json',
          '--mock',
          '--duration',
          '5',
          '--no-validate',
          '--out',
          '/dev/full',
          '--record',
          `${dir}/id.ndjson`,
        ],
        { timeoutMs: 120_000 },
      );
      expectClear(
        r,
        /^twolink: \/dev\/full: is \/dev\/full, a device that refuses every write \(no space left\): the identified rig file would be lost after the motion; give a file\n$/,
      );
      expect(r.stderr).not.toMatch(/excitation/);
      expectClear(
        await twolink(['identify', '--rig', 'rigs/mock-arm-far.json', '--mock', '--out', '/nonexistent/id.json']),
        /the folder \/nonexistent does not exist/,
      );
    },
    hangGuardMs(180_000),
  );
});

describe('input files: bounded, never a hang', () => {
  it('--rig /dev/zero, a FIFO and a directory are refused at once', async () => {
    const fifo = `${dir}/rig.fifo`;
    execFileSync('mkfifo', [fifo]);
    for (const [rig, re] of [
      ['/dev/zero', /\/dev\/zero: is a character device, not a rig file/],
      [fifo, /is a named pipe \(FIFO\), not a rig file/],
      [dir, /is a directory, not a rig file/],
    ] as const) {
      expectClear(await twolink(['model', 'id', '--rig', rig, '--q', '0,0', '--qd', '0,0', '--qdd', '0,0'], { timeoutMs: 30_000 }), re);
    }
    expectClear(await twolink(['compare', fifo], { timeoutMs: 30_000 }), /is a named pipe \(FIFO\), not a recording/);
  });

  it('a physically absurd rig is refused at load, before any loop thread starts (no "the loop thread died: ")', async () => {
    const r = await twolink(['run', '--rig', 'tests/fixtures/bad-input/rig-kt-3.json', '--mock', '--traj', 'point', '--json']);
    expectClear(r, /rig-kt-3\.json: motors\[1\]\.kt: kt 3 N m\/A and ke 0\.01 V s\/rad differ by a factor 300/);
    expect(r.stderr).not.toMatch(/loop thread/);
  });

  it('Firmata wiring errors exit 2 at load', async () => {
    expectClear(
      await twolink(['run', '--rig', 'tests/fixtures/bad-input/rig-firmata-not-pwm.json', '--mock', '--traj', 'point']),
      /firmata\.motors\[0\]\.pwm: pin 4 cannot do PWM on an Uno/,
    );
  });
});

describe('numbers: finite and in range, or the command says which input', () => {
  it('model id/fd/fk with 1e308: the argument and its range, not null', async () => {
    expectClear(
      await twolink(['model', 'id', '--rig', SEED, '--q=1e308,1e308', '--qd', '0,0', '--qdd', '0,0']),
      /--q: 1e\+308 rad is out of range: each value must be between -1000 and 1000 rad/,
    );
    expectClear(
      await twolink(['model', 'fd', '--rig', SEED, '--q', '0,0', '--qd=1e308,0', '--tau', '0,0']),
      /--qd: 1e\+308 rad\/s is out of range/,
    );
    expectClear(
      await twolink(['model', 'fk', '--rig', SEED, '--q', '0,0', '--qdd', '1e300,0', '--deg']),
      /--qdd: 1e\+300 deg\/s\^2 is out of range/,
    );
  });

  it('sim with the explicit Euler diverging: where, and which inputs, not null', async () => {
    expectClear(
      await twolink(['sim', '--rig', SEED, '--q0', '0,0', '--qd0', '1e6,1e6', '--integrator', 'euler', '--dt', '0.01', '--duration', '1']),
      /--qd0: 1000000 rad\/s is out of range/,
    );
    const r = await twolink([
      'sim',
      '--rig',
      SEED,
      '--q0',
      '0,0',
      '--qd0',
      '1e3,1e3',
      '--integrator',
      'euler',
      '--dt',
      '0.01',
      '--duration',
      '1',
    ]);
    expectClear(
      r,
      /sim: the state is not finite at t = [\d.]+ s for --q0 0,0 --qd0 1e3,1e3 --integrator euler --dt 0\.01: the euler integration diverged/,
    );
    expect(r.stdout).toBe('');
  });

  it('sim and traj refuse sizes that would run for hours', async () => {
    expectClear(
      await twolink(['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1e6', '--dt', '1e-7']),
      /is 10000000000000 steps: at most 50000000/,
    );
    expectClear(
      await twolink(['traj', '--rig', SEED, '--from', '0,0', '--to', '1,1', '--duration', '1e5', '--rate', '1e5']),
      /samples: at most 1000000/,
    );
    expectClear(
      await twolink([
        'plot',
        'traj',
        '--rig',
        SEED,
        '--from',
        '0,0',
        '--to',
        '1,1',
        '--duration',
        '1e5',
        '--rate',
        '1e4',
        '--out',
        `${dir}/x.svg`,
      ]),
      /samples: at most 200000 in a figure/,
    );
  });

  it.each([
    ['payload=abc', /--inject "payload=abc": the payload "abc" is not a number of kg/],
    ['payload=-5', /the payload -5 kg is out of range: it must be at least 0 and at most 20 kg/],
    ['latency=-50', /the latency -50 ms is out of range/],
    ['drop=NaN', /the probability "NaN" is not a number/],
    ['busy=1e9', /the time 1000000000 s is out of range: it must be above 0 and at most 30 s/],
    ['stall=3', /the joint "3" must be 1\.\.2 \(this arm has 2 joints\)/],
  ])('--inject %s is refused with its unit and range (busy=1e9 does not hang)', async (text, re) => {
    expectClear(await twolink(['run', '--rig', MOCK, '--mock', '--traj', 'point', '--inject', text], { timeoutMs: 30_000 }), re);
  });

  it('--fault, the old name of --inject: one line says so, and its bad values are named with the flag given', async () => {
    const r = await twolink(['run', '--rig', MOCK, '--mock', '--traj', 'point', '--fault', 'payload=-5'], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'twolink: --fault is deprecated: use --inject (same syntax; "fault" now means only a safety stop the loop declares)',
      'twolink: --fault "payload=-5": the payload -5 kg is out of range: it must be at least 0 and at most 20 kg',
    ]);
  });

  it('an injection the mock cannot take is refused before the run, naming the part it acts on', async () => {
    expectClear(
      await twolink(['run', '--rig', 'rigs/mock-arm-firmata.json', '--mock', '--traj', 'point', '--inject', 'drop=0.01@1'], {
        timeoutMs: 30_000,
      }),
      /--inject drop: drop acts on the line protocol's bytes, which the Firmata mock rig does not have/,
    );
  });

  it("a --rate too slow for the rig's momentum observer is refused naming both", async () => {
    const rig = JSON.parse(readFileSync(MOCK, 'utf8'));
    rig.twin.observerHz = 20;
    const f = `${dir}/observer-20.json`;
    writeFileSync(f, JSON.stringify(rig));
    expectClear(
      await twolink(['run', '--rig', f, '--mock', '--traj', 'point', '--rate', '100']),
      /--rate 100: .*observer-20\.json: twin\.observerHz: 20 Hz is too fast for a loop at 100 Hz/,
    );
  });
});

describe('arguments', () => {
  it.each([
    [['run', '--rig', MOCK, '--mock', 'reach'], /run: unexpected argument "reach"/],
    [['model', 'fk', '--rig', SEED, '--q', '0,0', 'extra'], /model fk: unexpected argument "extra"/],
    [['sim', '--rig', SEED, '--q0', '0,0', '--duration', '1', '5'], /sim: unexpected argument "5"/],
    [['traj', '--rig', SEED, '--from', '0,0', '--to', '1,1', '--duration', '1', 'x'], /traj: unexpected argument "x"/],
    [['rig', '--rig', MOCK, '--pty', 'x'], /rig: unexpected argument "x"/],
    [['tune', '--rig', MOCK, '--mock', 'x'], /tune: unexpected argument "x" \(give the rig with --rig/],
    [['setup', '--rig', MOCK, '--mock', 'x'], /setup: unexpected argument "x" \(give the rig with --rig/],
  ])('a stray positional argument is refused: %j', async (args, re) => {
    expectClear(await twolink(args), re);
  });

  it('traj messages name the segment (never "the undefined")', async () => {
    const a = await twolink(['traj', '--rig', SEED, '--space', 'endpoint', '--from', '1,0', '--to', '0.5,0.5', '--duration', '1']);
    expectClear(a, /the line to \(0\.500, 0\.500\) m starts or ends with the elbow straight/);
    const b = await twolink(['traj', '--rig', SEED, '--space', 'endpoint', '--from', '0.5,0.5', '--to', '5,5', '--duration', '1']);
    expectClear(b, /the line to \(5\.000, 5\.000\) m leaves the workspace/);
    expect(a.stderr + b.stderr).not.toContain('undefined');
  });

  it('model ik prints both elbow solutions, and q for --elbow', async () => {
    const r = await twolink(['model', 'ik', '--rig', SEED, '--xy', '0.5,0.5', '--elbow', 'up', '--deg']);
    expect(r.code).toBe(0);
    const o = lastJson(r);
    expect(o.elbow).toBe('up');
    expect(o.solutions.down[0]).toBeCloseTo(0, 9);
    expect(o.solutions.down[1]).toBeCloseTo(90, 9);
    expect(o.solutions.up[0]).toBeCloseTo(90, 9);
    expect(o.solutions.up[1]).toBeCloseTo(-90, 9);
    expect(o.q).toEqual(o.solutions.up);
  });
});
