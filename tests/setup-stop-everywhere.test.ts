// An e-stop, Ctrl-C or SIGTERM ends `twolink setup` wherever it comes: at every prompt and in every step
// (the arm moving or not), with the motors at zero, nothing written, and exit 1 (the e-stop) or 130 (an
// interruption). Driven in process as a person would: a terminal in raw mode whose keys the person
// presses when a prompt is on the screen, signals sent when a step's heading appears or while the
// simulated motors are driven (virtual time, the mock rig; events, never wall-clock windows).
import type { StopReason } from '../src/control/stop.js';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { setupCommand } from '../src/cli/setup-command.js';
import { FLAG } from '../src/protocol/codec.js';
import type { LineMock } from '../src/mock/line-mock.js';
import type { VirtualClock } from '../src/time/clock.js';
import { Person, type Act, HANG_GUARD_MS } from './helpers/setup-person.js';

// Hang guards only: the tests wait for events.
vi.setConfig({ testTimeout: HANG_GUARD_MS, hookTimeout: HANG_GUARD_MS });

const dir = mkdtempSync(join(tmpdir(), 'twolink-setup-stop-'));
let n = 0;

interface Stopped {
  code: number;
  json: { stopped: string | null; stop: StopReason | null; rigFile: string | null; steps: { name: string }[] };
  out: string;
  person: Person;
  /** Every simulated rig setup opened, the last one is where the arm was at the end. */
  mocks: LineMock[];
}

/** Runs setup on the mock rig as `person` does it; `moving` acts once when a run's motors are driven after `after` appeared. */
async function setup(person: Person, extra: string[] = [], moving?: { after: RegExp; act: Act }): Promise<Stopped> {
  const out = join(dir, `out-${n++}.json`);
  const mocks: LineMock[] = [];
  let acted = false;
  const watch = (mock: LineMock, clock: VirtualClock): void => {
    mocks.push(mock);
    if (!moving) return;
    const look = (): void => {
      if (acted) return;
      if (moving.after.test(person.text) && mock.plant.duty.some((d) => d !== 0)) {
        acted = true;
        person.act(moving.act);
        return;
      }
      clock.setTimer(0.002, look);
    };
    look();
  };
  const stdout: string[] = [];
  const code = await setupCommand(['--rig', 'rigs/mock-arm.json', '--mock', '--json', '--out', out, ...extra], {
    input: person.input as unknown as NodeJS.ReadStream,
    err: person.err,
    out: new (await import('node:stream')).Writable({ write: (c: Buffer, _e, cb) => (stdout.push(c.toString()), cb()) }),
    signals: person.signals,
    watch,
  });
  if (moving) expect(acted, 'the motors were driven after the cue').toBe(true);
  return { code, json: JSON.parse(stdout.join('').trim().split('\n').at(-1)!), out, person, mocks };
}

/** What every stop must leave: the motors at zero and disabled, nothing written, the reason said. */
function expectEnded(r: Stopped, reason: string, code: number): void {
  expect(r.code, r.person.text).toBe(code);
  expect(r.json.stopped).toBe(reason);
  // the operator's stop as a value: the e-stop key, or a signal (exit code 130)
  expect(r.json.stop).toEqual(reason === 'estop' ? { kind: 'estop' } : { kind: 'interrupted', signal: reason.replace('interrupted:', '') });
  expect(r.json.rigFile).toBeNull();
  expect(existsSync(r.out)).toBe(false);
  const last = r.mocks.at(-1)!;
  expect(last.plant.duty).toEqual([0, 0]);
  expect(last.board.flags() & FLAG.EN).toBe(0);
  expect(r.person.text).toMatch(/setup stopped: .*; the motors are off; no rig file written/);
  expect(r.person.input.raw, 'the terminal is given back').toBe(false);
}

/** The prompts of `setup --mock` at a terminal (the mock's hand turns the joints, so only these ask), in order. */
const PROMPTS: [string, RegExp, string | undefined][] = [
  // [which, its text, the last step that must have run]
  ['widen joint 1 limits?', /> joint 1: the stops allow soft limits/, 'zero'],
  ['widen joint 2 limits?', /> joint 2: the stops allow soft limits/, 'limits 1'],
  ['motors', /> the arm will move: clear it/, 'limits 2'],
  ['motor constants', /Motor constants:[\s\S]*> the arm will move: clear it/, 'breakaway 2'],
  ['identification', /> the arm will move about hanging/, 'motor 2 constant'],
  ['play', /Play: each joint[\s\S]*> the arm will move about hanging/, 'identification'],
  ['first reach', /> the arm will move over its reach/, 'play'],
];

describe('setup: the e-stop at every prompt ends it (exit 1, motors off, nothing written)', () => {
  it.each(PROMPTS)(
    'space at the "%s" prompt',
    async (_which, prompt, lastStep) => {
      const r = await setup(new Person().on(prompt, { keys: ' ' }));
      expectEnded(r, 'estop', 1);
      expect(r.person.text).toMatch(/E-STOP/);
      expect(r.person.text).toMatch(/setup stopped: the e-stop \(space or Esc\)/);
      expect(r.json.steps.at(-1)?.name).toBe(lastStep);
    },
    HANG_GUARD_MS,
  );

  it(
    'Esc at the last prompt: no Enter after it runs the reach',
    async () => {
      const person = new Person().on(/> the arm will move over its reach/, { keys: '\x1b' });
      // A person who, after the e-stop, presses Enter anyway (the bug: the next Enter ran the reach).
      person.on(/E-STOP/, { keys: '\r\r' });
      const r = await setup(person);
      expectEnded(r, 'estop', 1);
      expect(r.json.steps.map((s) => s.name)).not.toContain('first reach');
      expect(r.person.text).not.toMatch(/\[(PASS|WARN|FAIL)\] first reach/);
    },
    HANG_GUARD_MS,
  );
});

/** Setup's steps, and a cue that shows each is under way (with --yes nothing waits: the heading is said as the step starts). */
const STEPS: [string, RegExp][] = [
  ['board', /^twolink setup: /m],
  ['encoders', /Encoders, by hand/],
  ['zero', /Zero: let the arm hang/],
  ['limits', /Limits, by hand/],
  ['motors', /Motors: each output/],
  ['motor constants', /Motor constants: each joint/],
  ['identification', /Identification: a gentle/],
  ['play', /Play: each joint swept/],
  ['first reach', /First reach: the built-in/],
];

describe('setup: Ctrl-C and SIGTERM at every step end it (exit 130, motors off, nothing written)', () => {
  it.each(
    STEPS.flatMap(([step, cue]) => [
      [step, cue, 'Ctrl-C', { keys: '\x03' }] as const,
      [step, cue, 'SIGTERM', { signal: 'SIGTERM' }] as const,
    ]),
  )(
    '%s: %s',
    async (_step, cue, _how, act) => {
      const r = await setup(new Person().on(cue, act), ['--yes']);
      expectEnded(r, 'keys' in act ? 'interrupted:SIGINT' : 'interrupted:SIGTERM', 130);
    },
    HANG_GUARD_MS,
  );
});

describe('setup: stops while the motors are driven', () => {
  it.each([
    ['the motor pulse', /Motors: each output/, 'space', { keys: ' ' }, 'estop', 1],
    ['the speed test', /Motor constants: each joint/, 'SIGTERM', { signal: 'SIGTERM' }, 'interrupted:SIGTERM', 130],
    ['the identification run', /Identification: a gentle/, 'space', { keys: ' ' }, 'estop', 1],
    ['the identification run', /Identification: a gentle/, 'SIGTERM', { signal: 'SIGTERM' }, 'interrupted:SIGTERM', 130],
    ['the first reach', /First reach: the built-in/, 'Ctrl-C', { keys: '\x03' }, 'interrupted:SIGINT', 130],
    ['the first reach', /First reach: the built-in/, 'SIGINT', { signal: 'SIGINT' }, 'interrupted:SIGINT', 130],
  ] as const)(
    'during %s: %s',
    async (_what, after, _how, act, reason, code) => {
      const r = await setup(new Person(), ['--yes'], { after, act });
      expectEnded(r, reason, code);
    },
    HANG_GUARD_MS,
  );
});
