// Issue 26, the smaller holes: what the command line used to take without a word is now refused
// with one line naming the argument (exit code 2), or, for an injection the run never reached, a
// warning naming it. The built CLI, as users run it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSuite } from '../src/hil/suite.js';
import { twolink } from './helpers/cli.js';

const RUN = ['run', '--rig', 'rigs/mock-arm.json', '--traj', 'reach', '--json'];

describe('refused at once, one line naming the argument', () => {
  const cases: [string, string[], RegExp][] = [
    ['a hex --rate', [...RUN, '--mock', '--rate', '0x3e8'], /^twolink: --rate: "0x3e8" is not a number \(write it in decimal\)\n$/],
    [
      'a hex number in a list',
      ['model', 'fk', '--rig', 'rigs/seed-arm.json', '--q', '0x1,0'],
      /^twolink: --q: "0x1" in "0x1,0" is not a number/,
    ],
    [
      '--baud with --mock',
      [...RUN, '--mock', '--baud', '9600'],
      /^twolink: --baud 9600 goes with --port: the mock rig's serial line runs at the rig file's link\.baudRate\n$/,
    ],
    [
      "--port ''",
      [...RUN, '--port', ''],
      /^twolink: --port: an empty path: give the board's serial port, e.g\. \/dev\/ttyACM0 \(twolink ports lists them\)\n$/,
    ],
    [
      'an injection after --max-seconds',
      [...RUN, '--mock', '--inject', 'payload=0.2@30', '--max-seconds', '20'],
      /^twolink: --inject payload=0\.2@30: due at 30 s, after the run's end \(--max-seconds 20\): it would never happen\n$/,
    ],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const r = await twolink(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    });
  }
});

describe('an injection the run never reached', () => {
  it('twolink run: a warning naming it after the run (the reach on the mock ends in a few seconds)', async () => {
    const r = await twolink([...RUN, '--mock', '--inject', 'payload=0.2@300'], { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/twolink: WARNING: --inject payload=0\.2@300 never happened: the run ended \(at \d+\.\d\d s\) before 300 s\n/);
  });

  it('a hil scenario with an injection after its maxSeconds is refused, naming the scenario and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'twolink-args-'));
    const suite = join(dir, 'suite.json');
    writeFileSync(
      suite,
      JSON.stringify({
        scenarios: [
          {
            name: 'late',
            rig: join(process.cwd(), 'rigs/mock-arm.json'),
            traj: 'reach',
            maxSeconds: 10,
            injections: ['payload=0.2@12'],
            expect: {},
          },
        ],
      }),
    );
    expect(() => loadSuite(suite)).toThrow(
      /scenarios\[0\] \("late"\)\.injections\[0\]: "payload=0\.2@12" is due at 12 s, after the scenario's end \(maxSeconds 10 s\): it would never happen/,
    );
  });
});
