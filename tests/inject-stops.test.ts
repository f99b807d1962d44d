// Issue 20 item 6: every --inject case, applied through the one table (src/mock/injections.ts) to the
// mock rig in virtual time, ends with the stop a person would call right, asserted as the stop VALUE
// (its kind, and the joint where there is one), not its text. A new injection without a case here
// fails the first test. The host's injections (busy, throw) act here on the virtual clock and the
// loop's own callback, as they do on the loop thread in real time (tests/realtime/cli-faults.test.ts).
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import type { StopReason } from '../src/control/stop.js';
import { builtinPath } from '../src/model/builtins.js';
import { applyInjection, INJECTION_NAMES, lineMockSite, parseInjection, type InjectionName } from '../src/mock/injections.js';
import { F } from '../src/telemetry/tick.js';
import { virtualRun } from './helpers/virtual-run.js';
import { lineMock } from '../src/run/virtual.js';

interface Case {
  /** The --inject text, on the reach. */
  inject: string;
  /** Why a person would call this stop right. */
  why: string;
  stop: StopReason | Record<string, unknown>;
}

const done = { kind: 'done' };
const fault = (f: Record<string, unknown>): Record<string, unknown> => ({ kind: 'fault', fault: expect.objectContaining(f) });
const jointTrouble = (joint: number, ...causes: string[]): Record<string, unknown> =>
  fault({
    kind: 'following-error',
    joint,
    ...(causes.length ? { cause: expect.toSatisfy((c: unknown) => causes.includes(c as string)) } : {}),
  });

const CASES: Record<InjectionName, Case[]> = {
  payload: [
    { inject: 'payload=0.2@1.5', why: 'a light load: the arm carries it (the twin warns), the reach is done', stop: done },
    { inject: 'payload=0.5@1.5', why: 'a load joint 1 cannot carry along its plan', stop: jointTrouble(0) },
  ],
  stall: [
    { inject: 'stall=2@1', why: 'joint 2 jams: it does not move', stop: jointTrouble(1, 'jammed', 'stuck') },
    { inject: 'stall=1@0.5', why: 'joint 1 jams', stop: jointTrouble(0, 'jammed', 'stuck') },
  ],
  slip: [{ inject: 'slip=1:200@1.5', why: "encoder 1's count jumps 15 deg in a sample", stop: fault({ kind: 'encoder-jump', joint: 0 }) }],
  slipping: [
    {
      inject: 'slipping=1:20@0.5',
      why: 'encoder 1 slips on its shaft, 20 counts (1.5 deg) back at a time: not a wiring mistake, a load or a following error',
      stop: fault({ kind: 'encoder-slip', joint: 0, steps: 3 }),
    },
    {
      inject: 'slipping=2:12@1.5',
      why: 'encoder 2 slips, 12 counts (1.8 deg) at a time',
      stop: fault({ kind: 'encoder-slip', joint: 1, steps: 3 }),
    },
  ],
  reverse: [
    {
      inject: 'reverse=1@1.5',
      why: "encoder 1's reading flips over its zero in a sample",
      stop: fault({ kind: 'encoder-jump', joint: 0 }),
    },
  ],
  dead: [
    {
      inject: 'dead=2@0.5',
      why: "motor 2 gives no torque (not a wiring mistake: issue 20's example)",
      stop: jointTrouble(1, 'dead-motor'),
    },
    { inject: 'dead=1@0.5', why: 'motor 1 gives no torque', stop: jointTrouble(0, 'dead-motor', 'stuck') },
  ],
  sag: [
    {
      inject: 'sag=0.3@0.5',
      why: "the supply at 30%: joint 1 droops from its plan (issue 20's example); not a dead motor nor a jam",
      stop: {
        kind: 'fault',
        fault: { kind: 'following-error', joint: 0, errorDeg: expect.any(Number), limitDeg: expect.any(Number), t: expect.any(Number) },
      },
    },
  ],
  push: [
    { inject: 'push=1:2@1.5', why: 'a push the controller holds against: the reach is done', stop: done },
    { inject: 'push=2:1.5@1.5', why: 'a push on joint 2 it cannot hold', stop: jointTrouble(1) },
  ],
  force: [
    {
      inject: 'force=2,0@1.5+0.5',
      why: 'a hand pushes the endpoint with 2 N for half a second: the controller holds against it, the reach is done',
      stop: done,
    },
  ],
  hand: [
    {
      inject: 'hand=circle@1.5',
      why: 'a hand pulls the tracking arm (not floating) off its plan: the following guard stops it',
      stop: fault({ kind: 'following-error' }),
    },
  ],
  backlash: [
    {
      inject: 'backlash=2:0.5@0',
      why: 'half a degree of play in the elbow gearbox: the encoder on the motor cannot see it, the reach is done',
      stop: done,
    },
    { inject: 'backlash=1:0.5@1', why: 'play appears in the shoulder mid-reach (the link drops into it): the reach is done', stop: done },
  ],
  gearstiffness: [
    {
      inject: 'gearstiffness=1:2000@0',
      why: 'a softer mesh without play or stiction leaves the joint rigid: the reach is done',
      stop: done,
    },
  ],
  breakaway: [
    {
      inject: 'breakaway=2:0.12@0',
      why: 'the elbow sticks up to 4x its Coulomb friction: the controller breaks it away, the reach is done',
      stop: done,
    },
    { inject: 'breakaway=1:0.24@1', why: 'the shoulder starts sticking mid-reach: the reach is done', stop: done },
  ],
  stribeck: [{ inject: 'stribeck=1:0.05@0', why: 'a Stribeck velocity without stiction changes nothing: the reach is done', stop: done }],
  bridge: [
    {
      inject: 'bridge=2:tb6612@0',
      why: 'a TB6612 on the elbow the rig does not know of: its 0.5 ohm costs a little torque, the reach is done',
      stop: done,
    },
    {
      inject: 'bridge=1:l298n@0',
      why: 'an L298N on the shoulder the rig does not know of: its drop leaves 2.7 N m of 4.8, joint 1 cannot lift the arm along its plan',
      stop: jointTrouble(0),
    },
  ],
  bridgedrop: [{ inject: 'bridgedrop=2:1.4@0', why: 'the elbow bridge loses 1.4 V: the reach is done', stop: done }],
  bridgeohm: [{ inject: 'bridgeohm=1:1.15@0', why: "the shoulder bridge's 1.15 ohm in series: the reach is done", stop: done }],
  deadtime: [
    { inject: 'deadtime=1:40@0', why: '2 % of each PWM period lost on the shoulder (a dead band): the reach is done', stop: done },
  ],
  pwmhz: [{ inject: 'pwmhz=1:980@0', why: 'the PWM at 980 Hz (the ideal bridge loses no time per period): the reach is done', stop: done }],
  pwmbits: [{ inject: 'pwmbits=1:6@0', why: '6-bit PWM on the shoulder (64 steps, 0.08 N m each): the reach is done', stop: done }],
  drop: [{ inject: 'drop=0.01@0', why: '1% of the bytes lost: counted, the reach is done', stop: done }],
  corrupt: [{ inject: 'corrupt=0.01@0', why: '1% of the bytes with a flipped bit: rejected by the CRC, the reach is done', stop: done }],
  latency: [{ inject: 'latency=5@1', why: 'a 5 ms later command: predicted, the reach is done', stop: done }],
  silent: [{ inject: 'silent@1.5', why: 'the board stops answering', stop: fault({ kind: 'link-lost' }) }],
  unplug: [
    {
      inject: 'unplug@1.5',
      why: 'the cable is pulled',
      stop: fault({ kind: 'cable', port: 'mock:mock-arm', code: 'EIO', message: 'the device was unplugged (EIO)' }),
    },
  ],
  reset: [{ inject: 'reset@1.5', why: 'the board resets', stop: fault({ kind: 'board-reset' }) }],
  garbage: [{ inject: 'garbage=1000@1.5', why: 'noise from the board: rejected, the reach is done', stop: done }],
  longline: [{ inject: 'longline=1000000@1.5', why: 'a line that never ends: the link is lost', stop: fault({ kind: 'link-lost' }) }],
  busy: [
    {
      inject: 'busy=1@1.5',
      why: "the host's loop blocked for a second: the board's watchdog cut the motors",
      stop: fault({ kind: 'watchdog' }),
    },
  ],
  throw: [
    {
      inject: 'throw@1.5',
      why: 'an exception in the loop',
      stop: fault({ kind: 'internal', where: 'the loop thread', message: expect.stringMatching(/injected exception/) }),
    },
  ],
};

describe('every --inject case stops the way a person would call right', () => {
  it('every injection of the table has a case here', () => {
    expect(Object.keys(CASES).sort()).toEqual([...INJECTION_NAMES].sort());
  });

  const all = Object.values(CASES).flat();
  it.each(all.map((c) => [c.inject, c.why, c] as const))('%s: %s', async (_text, _why, c) => {
    const rig = loadRig('rigs/mock-arm.json');
    const inj = parseInjection(c.inject, rig.joints);
    let applied = false;
    const run = await virtualRun(rig, [builtinPath(rig.arm, 'reach')!], {
      maxSeconds: 20,
      onTick: (core, clock, mock) => {
        if (applied || core.row[F.t]! < inj.at) return;
        applied = true;
        const line = lineMock({ mock });
        const site = {
          ...lineMockSite('the mock rig', line.plant, line.board, () => line.unplug()),
          host: {
            block: (s: number): void => void clock.advanceBy(s),
            raise: (message: string): never => {
              throw new Error(message);
            },
          },
        };
        expect(applyInjection(site, inj)).toEqual({ ok: true });
      },
    });
    expect(applied).toBe(true);
    expect(run.result.core.stop).toEqual(c.stop);
    // Whatever the stop, the motors end at zero.
    expect(run.mock.plant.duty).toEqual([0, 0]);
  });
});
