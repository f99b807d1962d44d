// One table says which commands the loop takes in each of its states (ACCEPTED_COMMANDS,
// control/commands.ts). The loop refuses by it, and the dashboard's keys read it: a key sends what the
// loop in that state would act on, and otherwise the status line says the loop's own reason. Also:
// the trajectory phases' events carry the plan the dashboard shows (times and the endpoint's path).
import { afterEach, describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { ACCEPTED_COMMANDS, accepts, refusal, type LoopCommand, type LoopCommandKind } from '../src/control/commands.js';
import { PLAN_POINTS, type LoopEvent } from '../src/control/events.js';
import { LoopCore } from '../src/control/loop.js';
import { LOOP_STATES, type LoopState } from '../src/telemetry/tick.js';
import { builtinNames, builtinPath, type PathSpec } from '../src/model/builtins.js';
import { forwardKinematics } from '../src/model/kinematics.js';
import { buildPath } from '../src/model/trajectory.js';
import { VirtualClock } from '../src/time/clock.js';
import { zeroCounters, type Link, type Reading } from '../src/transport/link.js';
import { Dashboard, refusalText } from '../src/tui/dashboard.js';
import { KEYS } from '../src/tui/keys.js';
import { virtualRun } from './helpers/virtual-run.js';
import { FakeSession, fakeTerminal, makeRow } from './tui-fake-terminal.js';

const rig = loadRig('rigs/mock-arm.json');
const reach = builtinPath(rig.arm, 'reach')!;
const KINDS: LoopCommandKind[] = ['start', 'pause', 'resume', 'hold', 'stop', 'estop', 'disable', 'enable', 'zero', 'rezero', 'next'];

function commandOf(kind: LoopCommandKind): LoopCommand {
  if (kind === 'start') return { kind, path: reach };
  if (kind === 'stop') return { kind, reason: { kind: 'requested', text: 'test' } };
  return { kind };
}

/** A loop with one sample read (the arm's pose known), on a link that only takes duties. */
function freshCore(): { core: LoopCore; events: LoopEvent[]; duties: number[][] } {
  const events: LoopEvent[] = [];
  const duties: number[][] = [];
  const link = {
    counters: zeroCounters(),
    writeDuty: (d: readonly number[]) => duties.push(d.slice()) - 1,
    appliedDuty: () => [0, 0],
    dutyChanges: () => [],
    onEvent: () => undefined,
  } as unknown as Link;
  const core = new LoopCore({
    rig,
    link,
    clock: new VirtualClock(),
    rateHz: 500,
    feedforward: 'desired',
    sink: () => undefined,
    onEvent: (e) => events.push(e),
  });
  const q = [0.2, 0.9];
  const r: Reading = {
    q,
    raw: [0, 0],
    boardTime: 0,
    index: 0,
    applyAt: 0.002,
    superseded: false,
    hostTime: 0,
    sampleTime: 0,
    ack: null,
    enabled: true,
    watchdog: false,
    flags: 0,
  };
  core.onSample(r);
  return { core, events, duties };
}

/** Commands that bring a fresh loop into each state (the lost link for a fault). */
const INTO: Record<LoopState, (c: LoopCore) => void> = {
  idle: () => undefined,
  hold: (c) => c.command({ kind: 'hold' }),
  track: (c) => c.command(commandOf('start')),
  paused: (c) => {
    c.command(commandOf('start'));
    c.command({ kind: 'pause' });
  },
  release: (c) => {
    c.command(commandOf('start'));
    c.command({ kind: 'stop', reason: { kind: 'requested', text: 'test' } });
  },
  disabled: (c) => c.command({ kind: 'disable' }),
  stopped: (c) => c.command({ kind: 'stop', reason: { kind: 'requested', text: 'test' } }),
  estop: (c) => c.command({ kind: 'estop' }),
  fault: (c) => c.linkLost(100),
};

function coreIn(state: LoopState): ReturnType<typeof freshCore> {
  const f = freshCore();
  INTO[state](f.core);
  expect(f.core.state).toBe(state);
  f.events.length = 0;
  f.duties.length = 0;
  return f;
}

describe('the loop refuses by the table', () => {
  it('in every state, every command: acted on exactly when the table has it; a refused one changes nothing and says why', () => {
    let refused = 0;
    for (const state of LOOP_STATES) {
      for (const kind of KINDS) {
        const { core, events, duties } = coreIn(state);
        const result = core.command(commandOf(kind));
        expect(result.ok, `${kind} in ${state}`).toBe(ACCEPTED_COMMANDS[state].includes(kind));
        if (!result.ok) {
          refused++;
          expect(result.refusal).toEqual(refusal(state, kind));
          expect(result.refusal.why.length).toBeGreaterThan(0);
          expect(core.state).toBe(state);
          expect(events).toEqual([]);
          expect(duties).toEqual([]);
        }
      }
    }
    // (the table is not trivially all-yes or all-no)
    expect(refused).toBeGreaterThan(30);
    expect(refused).toBeLessThan(LOOP_STATES.length * KINDS.length - 20);
  });

  it('a command the table takes does what it says: pause, resume, next, enable, disable', () => {
    const t = coreIn('track');
    t.core.command({ kind: 'pause' });
    expect(t.core.state).toBe('paused');
    t.core.command({ kind: 'resume' });
    expect(t.core.state).toBe('track');
    t.core.command({ kind: 'next' });
    expect(t.core.state).toBe('hold');
    t.core.command({ kind: 'disable' });
    expect(t.core.state).toBe('disabled');
    expect(t.duties.at(-1)).toEqual([0, 0]);
    t.core.command({ kind: 'enable' });
    expect(t.core.state).toBe('hold');
  });
});

describe("the dashboard's keys read the same table", () => {
  const open: Dashboard[] = [];
  afterEach(() => {
    for (const d of open.splice(0)) d.stop();
  });

  function dashboardIn(state: LoopState): { dash: Dashboard; session: FakeSession } {
    const term = fakeTerminal(120, 40);
    const session = new FakeSession();
    const paths = builtinNames(rig.arm).map<PathSpec>((n) => builtinPath(rig.arm, n)!);
    const dash = new Dashboard({ screen: term.screen, session, rig, paths, demo: true, onQuit: () => undefined });
    open.push(dash);
    session.row = makeRow({ state });
    dash.frame();
    return { dash, session };
  }

  it('in every state, each key sends a command the loop in that state acts on, or says why the loop would not', () => {
    const keys = KEYS.filter((k) => k.commands);
    expect(keys.map((k) => k.action)).toEqual(['pause', 'enable', 'next', 'zero']);
    for (const state of LOOP_STATES) {
      for (const key of keys) {
        const { dash, session } = dashboardIn(state);
        dash.act(key.action);
        const what = `${key.shown} in ${state}`;
        if (session.sent.length) {
          expect(session.sent.length, what).toBe(1);
          const sent = session.sent[0]!;
          // the first of the key's commands that the table takes ...
          expect(sent.kind, what).toBe(key.commands!.find((k) => accepts(state, k)));
          // ... and the loop in that state acts on it
          expect(coreIn(state).core.command(sent).ok, what).toBe(true);
        } else {
          // the loop refuses every command of the key, and the status line gives its reason
          const results = key.commands!.map((k) => coreIn(state).core.command(commandOf(k)));
          expect(
            results.every((r) => !r.ok),
            what,
          ).toBe(true);
          const first = results[0]!;
          if (first.ok) throw new Error('unreachable');
          expect(dash.panelState().message, what).toEqual({ text: refusalText(first.refusal), level: 'warn' });
        }
      }
    }
  });

  it('the e-stop key is sent in every state, whatever the table says (the loop is the judge)', () => {
    for (const state of LOOP_STATES) {
      const { dash, session } = dashboardIn(state);
      dash.act('estop');
      expect(session.sent).toEqual([{ kind: 'estop', reason: { kind: 'estop', by: 'key' } }]);
    }
  });

  it('impedance mode: + and - scale the stiffness by 1.25 and f zeroes the force estimate; in another mode they say so', () => {
    const { dash, session } = dashboardIn('hold');
    expect(session.sent).toEqual([]);
    dash.act('stiffer');
    expect(dash.panelState().message?.text).toMatch(/are for|change the stiffness in impedance mode/);
    const factors: number[] = [];
    let tares = 0;
    Object.assign(session, { scaleStiffness: (f: number) => factors.push(f) > 0, tareForce: () => ++tares > 0 });
    dash.act('stiffer');
    dash.act('softer');
    dash.act('tare');
    expect(factors).toEqual([1.25, 1 / 1.25]);
    expect(tares).toBe(1);
    expect(dash.panelState().message?.text).toBe('force estimate zeroed here (f)');
    expect(session.sent).toEqual([]);
  });

  it('the reasons name the key to press first: z while tracking says d, space while disabled says d', () => {
    let { dash } = dashboardIn('track');
    dash.act('zero');
    expect(dash.panelState().message?.text).toBe('zero: only while the motors are disabled or the loop is idle (d to disable)');
    ({ dash } = dashboardIn('disabled'));
    dash.act('pause');
    expect(dash.panelState().message?.text).toBe('the motors are disabled (d to enable)');
    ({ dash } = dashboardIn('fault'));
    dash.act('next');
    expect(dash.panelState().message?.text).toBe('the run is over (fault): q to exit');
  });
});

describe("a trajectory phase's event carries its plan", () => {
  it('the phases tile the trajectory, the proper one lasts what the path does, and the paths run where the plan goes', async () => {
    const run = await virtualRun(rig, [reach]);
    expect(run.summary.stop).toEqual({ kind: 'done' });
    const phases = run.events.filter(
      (e): e is Extract<LoopEvent, { kind: 'trajectory'; phase: 'approach' | 'track' | 'park' }> =>
        e.kind === 'trajectory' && e.phase !== 'none',
    );
    expect(phases.map((e) => e.phase)).toEqual(['approach', 'track', 'park']);
    const [approach, track, park] = phases.map((e) => e.plan);
    expect(approach!.fromS).toBe(0);
    expect(track!.fromS).toBe(approach!.toS);
    expect(park!.fromS).toBe(track!.toS);
    // The trajectory proper lasts what the path built on its own lasts.
    const proper = buildPath(rig.arm, reach.start, reach.steps);
    expect(track!.toS - track!.fromS).toBeCloseTo(proper.duration, 9);
    // Its path starts and ends where that path's endpoint does (to the 0.1 mm the event keeps).
    const at = (t: number): number[] => forwardKinematics(rig.arm, proper.sample(t).q).endpoint.position;
    expect(track!.path.length).toBe(PLAN_POINTS.track + 1);
    expect(approach!.path.length).toBe(PLAN_POINTS.approach + 1);
    for (const [p, q] of [
      [track!.path[0]!, at(0)],
      [track!.path.at(-1)!, at(proper.duration)],
    ] as const) {
      expect(Math.abs(p[0] - q[0]!)).toBeLessThanOrEqual(5e-5);
      expect(Math.abs(p[1] - q[1]!)).toBeLessThanOrEqual(5e-5);
    }
    // The approach ends where the trajectory proper begins; the way back ends where the approach began.
    expect(approach!.path.at(-1)).toEqual(track!.path[0]);
    expect(park!.path.at(-1)).toEqual(approach!.path[0]);
  });
});
