// `twolink setup` as a process: a real SIGINT or SIGTERM from outside ends it with exit 130 and no rig
// file, and stdin closed at a later prompt ends it with exit 1 and a message that says so. The signal is
// sent when a prompt is on stderr (setup waits there for Enter from piped stdin): an event, not a time.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BIN, ROOT, twolink, whyExit } from '../helpers/cli.js';
import { CHILD_GUARD_MS, HANG_GUARD_MS } from '../helpers/setup-person.js';
import { own } from '../helpers/owned-children.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-signals-'));

/** Runs setup --mock with piped stdin; each time `answers[i].when` first shows on stderr, writes its line or sends its signal. */
function setup(
  out: string,
  answers: { when: RegExp; line?: string; signal?: NodeJS.Signals }[],
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, 'setup', '--rig', 'rigs/mock-arm.json', '--mock', '--out', out], {
      cwd: ROOT,
    });
    own(child);
    let stderr = '';
    const pending = answers.slice();
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      while (pending.length && pending[0]!.when.test(stderr)) {
        const a = pending.shift()!;
        if (a.line !== undefined) child.stdin.write(a.line);
        if (a.signal) child.kill(a.signal);
      }
    });
    child.stdout.resume();
    const guard = setTimeout(() => child.kill('SIGKILL'), CHILD_GUARD_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stderr });
    });
  });
}

const MOTORS = /Motors: each output[\s\S]*> the arm will move: clear it/;
const CONSTANTS = /Motor constants: each joint[\s\S]*> the arm will move: clear it/;
const IDENTIFY = /> the arm will move about hanging/;
const PLAY = /Play: each joint swept[\s\S]*> the arm will move about hanging/;
const REACH = /> the arm will move over its reach/;

describe('twolink setup: signals from outside', () => {
  it.each([
    ['SIGINT', 'the motors prompt', [{ when: MOTORS, signal: 'SIGINT' as const }]],
    [
      'SIGTERM',
      'the identification prompt',
      [
        { when: MOTORS, line: '\n' },
        { when: CONSTANTS, line: '\n' },
        { when: IDENTIFY, signal: 'SIGTERM' as const },
      ],
    ],
    [
      'SIGTERM',
      'the first reach prompt',
      [
        { when: MOTORS, line: '\n' },
        { when: CONSTANTS, line: '\n' },
        { when: IDENTIFY, line: '\n' },
        // setup's play step (after the identification) asks too
        { when: PLAY, line: '\n' },
        { when: REACH, signal: 'SIGTERM' as const },
      ],
    ],
  ])(
    '%s at %s: exit 130, the motors off, no rig file',
    async (sig, _where, answers) => {
      const out = join(dir, `${sig}-${answers.length}.json`);
      const r = await setup(out, answers);
      expect(r.code, whyExit(r)).toBe(130);
      expect(r.stderr).toMatch(
        new RegExp(
          `setup stopped: ${sig === 'SIGINT' ? 'Ctrl-C \\(SIGINT\\)' : 'the signal SIGTERM'}; the motors are off; no rig file written`,
        ),
      );
      expect(r.stderr).not.toMatch(/^\s+at /m);
      expect(existsSync(out)).toBe(false);
    },
    HANG_GUARD_MS,
  );
});

describe('twolink setup: stdin closed at a prompt', () => {
  it.each([
    ['the motors prompt', ''],
    ['the identification prompt (after two Enters)', '\n\n'],
    ['the first reach prompt (after three Enters)', '\n\n\n'],
  ])(
    '%s: exit 1 with a message, the motors off, no rig file',
    async (_where, input) => {
      const out = join(dir, `stdin-${input.length}.json`);
      const r = await twolink(['setup', '--rig', 'rigs/mock-arm.json', '--mock', '--out', out], { input, timeoutMs: CHILD_GUARD_MS });
      expect(r.code, whyExit(r)).toBe(1);
      expect(r.stderr).toMatch(
        /setup stopped: stdin (closed while setup was waiting for Enter|is closed: setup cannot wait for Enter) \(give --yes[^\n]*; the motors are off; no rig file written/,
      );
      expect(existsSync(out)).toBe(false);
    },
    HANG_GUARD_MS,
  );
});

/**
 * Runs setup --mock on a real terminal (a pty from util-linux's script(1); stdin in raw mode, as a
 * person's): each prompt is answered by `key(prompt)` once it is on the screen (Enter, n, or a stop key),
 * and `after` is typed once the E-STOP shows (a person pressing Enter anyway).
 */
function onTerminal(out: string, key: (prompt: string) => string, after = ''): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const cmd = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} setup --rig rigs/mock-arm.json --mock --no-identify --out ${JSON.stringify(out)}`;
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { cwd: ROOT });
    own(child);
    let text = '';
    let answered = 0;
    let stopped = false;
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const prompts = text.split('  > ').slice(1);
      // A prompt is answered once its line is complete on the screen (it ends with "stops) ").
      while (answered < prompts.length && /stops\) $/.test(prompts[answered]!.split('\n')[0]!))
        child.stdin.write(key(prompts[answered++]!));
      if (!stopped && /E-STOP/.test(text)) {
        stopped = true;
        if (after) child.stdin.write(after);
      }
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), CHILD_GUARD_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, text });
    });
  });
}

const answer = (p: string): string => (/\(y: yes/.test(p) ? 'n' : '\r');

describe('twolink setup on a real terminal (a pty)', () => {
  it('space at the last prompt ("the arm will move over its reach"), then Enter: E-STOP, exit 1, no reach, no rig file', async () => {
    const out = join(dir, 'pty-space.json');
    const r = await onTerminal(out, (p) => (/over its reach/.test(p) ? ' ' : answer(p)), '\r\r');
    expect(r.code, r.text).toBe(1);
    expect(r.text).toMatch(/E-STOP/);
    expect(r.text).toMatch(/setup stopped: the e-stop \(space or Esc\); the motors are off; no rig file written/);
    expect(r.text).not.toMatch(/\[(PASS|WARN|FAIL)\] first reach/);
    expect(existsSync(out)).toBe(false);
  });

  it('Esc at the motors prompt: exit 1, no motor driven, no rig file', async () => {
    const out = join(dir, 'pty-esc.json');
    const r = await onTerminal(out, (p) => (/the arm will move: clear it/.test(p) ? '\x1b' : answer(p)));
    expect(r.code, r.text).toBe(1);
    expect(r.text).not.toMatch(/\] motor output 1:/);
    expect(existsSync(out)).toBe(false);
  });

  it('Ctrl-C at the question about widening joint 1: exit 130, no rig file', async () => {
    const out = join(dir, 'pty-ctrl-c.json');
    const r = await onTerminal(out, (p) => (/joint 1: the stops allow/.test(p) ? '\x03' : answer(p)));
    expect(r.code, r.text).toBe(130);
    expect(r.text).toMatch(/setup stopped: Ctrl-C \(SIGINT\); the motors are off; no rig file written/);
    expect(existsSync(out)).toBe(false);
  });
});
