// Without real-time priority (--no-rt, or refused: a user without an rtprio limit or CAP_SYS_NICE),
// `run`, `demo` and `rig` say so at start-up in one line: that a busy machine may stop the arm, and how
// to get the priority. Refused is tried as user "nobody" (setpriv, util-linux).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, twolink } from '../helpers/cli.js';
import { own } from '../helpers/owned-children.js';

const WARNING =
  /^twolink( rig)?: WARNING: no real-time priority \((not asked for: --no-rt|refused: [^\n]*Operation not permitted[^\n]*)\): a busy machine may stop the arm \(fault:watchdog or link-lost\); to get it, allow it with an rtprio limit[^\n]*CAP_SYS_NICE[^\n]*chrt -f 40 as root$/gm;

/** `twolink rig ... --pty` until it serves; then SIGTERM; resolves with its stderr. */
function rigStderr(prefix: string[], args: string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(
      prefix[0] ?? process.execPath,
      [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), BIN, 'rig', ...args],
      { cwd: ROOT, env: { ...process.env, HOME: '/tmp' } },
    );
    own(child);
    let err = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (/serving on|in simavr on/.test(err)) child.kill('SIGTERM');
    });
    child.on('close', () => resolve(err));
  });
}

const NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

describe('one line at start-up without real-time priority', () => {
  it('run --no-rt', async () => {
    const r = await twolink([
      'run',
      '--rig',
      'rigs/mock-arm.json',
      '--mock',
      '--traj',
      'reach',
      '--no-rt',
      '--max-seconds',
      '0.3',
      '--json',
    ]);
    expect(r.stderr.match(WARNING)?.length).toBe(1);
  });

  it('demo, refused (user nobody)', async () => {
    const r = await new Promise<string>((resolve) => {
      const child = spawn(
        NOBODY[0]!,
        [...NOBODY.slice(1), process.execPath, BIN, 'demo', '--headless', '--traj', 'reach', '--max-seconds', '0.3', '--json'],
        { cwd: ROOT, env: { ...process.env, HOME: '/tmp' } },
      );
      own(child);
      let err = '';
      child.stdout.resume();
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', () => resolve(err));
    });
    expect(r.match(WARNING)?.length).toBe(1);
  });

  it('run, refused (user nobody)', async () => {
    const r = await new Promise<string>((resolve) => {
      const child = spawn(
        NOBODY[0]!,
        [
          ...NOBODY.slice(1),
          process.execPath,
          BIN,
          'run',
          '--rig',
          'rigs/mock-arm.json',
          '--mock',
          '--traj',
          'reach',
          '--max-seconds',
          '0.3',
          '--json',
        ],
        { cwd: ROOT, env: { ...process.env, HOME: '/tmp' } },
      );
      own(child);
      let err = '';
      child.stdout.resume();
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', () => resolve(err));
    });
    expect(r.match(WARNING)?.length).toBe(1);
  });

  it('demo --no-rt', async () => {
    const r = await twolink(['demo', '--headless', '--traj', 'reach', '--no-rt', '--max-seconds', '0.3', '--json']);
    expect(r.stderr.match(WARNING)?.length).toBe(1);
  });

  it.skipIf(!existsSync('/usr/include/simavr/sim_avr.h'))('rig --firmware --no-rt', async () => {
    expect((await rigStderr([], ['--rig', 'rigs/mock-arm.json', '--pty', '--firmware', '--no-rt'])).match(WARNING)?.length).toBe(1);
  });

  it('rig --no-rt, and rig refused (user nobody)', async () => {
    expect((await rigStderr([], ['--rig', 'rigs/mock-arm.json', '--pty', '--no-rt'])).match(WARNING)?.length).toBe(1);
    expect((await rigStderr(NOBODY, ['--rig', 'rigs/mock-arm-firmata.json', '--pty'])).match(WARNING)?.length).toBe(1);
  });

  it.skipIf(process.getuid?.() !== 0)('granted (root): no warning', async () => {
    const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--traj', 'reach', '--max-seconds', '0.3', '--json']);
    expect(r.stderr).not.toMatch(/no real-time priority/);
  });
});
