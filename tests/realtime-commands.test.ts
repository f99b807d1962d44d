// Every command that moves the arm asks for real-time priority as `run` does (issue 33: tune and
// identify on a port failed on a busy machine for a host gap past the board's watchdog), and says in
// one line what it got. The port here is /dev/null, refused when it opens. identify says it as its first
// run starts (before that run opens the port); tune and setup ask only once their port is open (after
// start-up's CPU work, which at SCHED_FIFO can meet the kernel's 5 % for normal threads: src/tune/realtime-compute.ts),
// so here they ask nothing and say nothing of it (tests/realtime/setup-pty.test.ts and tune-port.test.ts
// see their line on a pty rig).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { twolink } from './helpers/cli.js';
import { hangGuardMs } from './helpers/hang-guard.js';
import { schedPolicy, threadId } from '../src/time/threads.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-rt-commands-'));
const COMMANDS: [string, string[]][] = [
  ['tune', ['tune', '--rig', 'rigs/mock-arm.json', '--port', '/dev/null', '--yes', '--joint', '2', '--out', join(dir, 't.json')]],
  [
    'identify',
    [
      'identify',
      '--rig',
      'rigs/mock-arm.json',
      '--port',
      '/dev/null',
      '--yes',
      '--out',
      join(dir, 'i.json'),
      '--record',
      join(dir, 'i.ndjson'),
    ],
  ],
  ['setup', ['setup', '--rig', 'rigs/mock-arm.json', '--port', '/dev/null', '--yes', '--out', join(dir, 's.json')]],
];

describe('setup, tune and identify on a port ask for real-time priority', () => {
  it.each(COMMANDS.filter(([name]) => name === 'identify'))(
    '%s says what it got as its first run starts, and with --no-rt that it did not ask',
    async (name, args) => {
      const r = await twolink(args, { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(3); // /dev/null is not a serial device
      const all = r.stdout + r.stderr;
      // Granted where the test runs as root (CI) or with an rtprio limit; else the refusal and how to allow it.
      expect(all).toMatch(
        new RegExp(
          `twolink ${name}: (real-time scheduling: SCHED_FIFO 40 granted to the thread that drives the arm|WARNING: no real-time priority \\(refused: )`,
        ),
      );
      // other output files: a run that failed to open may still leave its recording (its header and why it ended)
      const no = await twolink([...args.map((a) => (a.startsWith(dir) ? a.replace(/(\.\w+)$/, '-no-rt$1') : a)), '--no-rt'], {
        timeoutMs: 20_000,
      });
      expect(no.stdout + no.stderr).toMatch(new RegExp(`twolink ${name}: WARNING: no real-time priority \\(not asked for: --no-rt\\)`));
    },
    hangGuardMs(40_000),
  );

  it.each(COMMANDS.filter(([name]) => name !== 'identify'))(
    '%s on a port that does not open: the error, exit 3, and no real-time priority asked for (nothing was opened)',
    async (name, args) => {
      const r = await twolink(args, { timeoutMs: 20_000 });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/\/dev\/null/);
      expect(r.stdout + r.stderr).not.toMatch(new RegExp(`twolink ${name}: (real-time scheduling|WARNING: no real-time priority)`));
    },
    hangGuardMs(40_000),
  );

  it('the test process itself is not at real-time priority (what it starts must not inherit it)', () => {
    expect(schedPolicy(threadId())).not.toBe(1);
  });
});
