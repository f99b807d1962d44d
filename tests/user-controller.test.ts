// The seam for a user's own control law: loading a controller module (every way it can be wrong is a
// ControllerError naming the file), and one tick of it (every way update can go wrong is a result,
// never an exception). The shipped examples are checked on the physics they claim.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { simulate } from '../src/model/arm.js';
import { computeGravity, createActuatedArmData, createActuatedArmModel, createRigidArmModel } from '../src/model/actuated.js';
import { armEndpoint } from '../src/model/kinematics.js';
import { plantModelSpec } from '../src/mock/plant.js';
import { builtinPath } from '../src/model/builtins.js';
import { buildPath } from '../src/model/trajectory.js';
import { controllerContext, ControllerError, PluggedController, type ControllerSample } from '../src/control/user-controller.js';
import { stolenClockMs } from '../src/time/threads.js';

const rig = loadRig('rigs/mock-arm.json');
const context = controllerContext(rig, 500);
const dir = mkdtempSync(join(tmpdir(), 'twolink-controllers-'));

/** Writes a controller module and returns its path relative to the cwd (as a user would type it). */
function module(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, body);
  return relative(process.cwd(), file);
}

function restSample(pc: PluggedController, q: number[]): ControllerSample {
  return pc.fill(0, q, [0, 0], { q, qd: [0, 0], qdd: [0, 0] });
}

// Tests that are not about update's time run on a clock that stands still: on a loaded machine (six
// CPU hogs) a preempted update took 2.89 ms of wall time, three ticks in a row, and the time rule fired.
const UNTIMED = { now: (): number => 0 };

describe('PluggedController.load: a module that cannot be used names the file', () => {
  const cases: [string, string | undefined, RegExp][] = [
    ['missing.js', undefined, /^controller .*missing\.js: no such file/],
    // (the exact parser message differs between node and vitest's loader; the CLI test checks node's)
    ['syntax.js', 'export default function (ctx) { return { update( } }', /^controller .*syntax\.js: cannot import it: \S/],
    [
      'no-default.js',
      'export function createController() { return { update: () => [0, 0] }; }',
      /^controller .*no-default\.js: the default export must be a function createController\(context\), got undefined/,
    ],
    ['object-default.js', 'export default { update: () => [0, 0] };', /the default export must be a function .*got an object/],
    [
      'factory-throws.js',
      "export default () => { throw new RangeError('no gains for this arm'); };",
      /^controller .*factory-throws\.js: createController\(context\) threw: RangeError: no gains for this arm$/,
    ],
    [
      'no-update.js',
      'export default () => ({ step: () => [0, 0] });',
      /must return an object with an update\(sample\) method, got an object/,
    ],
    ['returns-null.js', 'export default async () => null;', /must return an object with an update\(sample\) method, got null/],
    ['bad-reset.js', 'export default () => ({ update: () => [0, 0], reset: 3 });', /reset must be a function when present, got a number/],
  ];
  for (const [name, body, message] of cases) {
    it(name, async () => {
      const file = body === undefined ? relative(process.cwd(), join(dir, name)) : module(name, body);
      const err = await PluggedController.load(file, context).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ControllerError);
      expect((err as Error).name).toBe('ControllerError');
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).toContain(file);
    });
  }

  it('an async factory gets the context: the rig, the bound model and the rate', async () => {
    const file = module(
      'context.js',
      `export default async (ctx) => {
         const g = ctx.model.gravity([0.1, 0.2]);
         return { update: () => [ctx.rateHz, g[1]], reset() {} };
       };`,
    );
    const pc = await PluggedController.load(file, context, UNTIMED);
    const out = [0, 0];
    expect(pc.step(restSample(pc, [0, 0]), 0.002, out)).toEqual({ ok: true });
    expect(out[0]).toBe(500);
    const rigid = createRigidArmModel(rig.arm);
    expect(out[1]).toBeCloseTo(computeGravity(rigid, createActuatedArmData(rigid), [0.1, 0.2])[1]!, 12);
    expect(pc.reset()).toEqual({ ok: true });
  });
});

describe('PluggedController.step: a misbehaving update is a result naming the file, and the torques are zero', () => {
  const bad: [string, string, RegExp][] = [
    [
      'throws.js',
      "export default () => ({ update() { throw new Error('gain table empty'); } });",
      /^[^ ]*throws\.js: update threw: gain table empty$/,
    ],
    ['nan.js', 'export default () => ({ update: () => [0.5, NaN] });', /^[^ ]*nan\.js: update returned NaN as the torque of joint 2$/],
    ['infinite.js', 'export default () => ({ update: () => [-Infinity, 0] });', /update returned -Infinity as the torque of joint 1$/],
    ['string.js', "export default () => ({ update: () => [0, '1.5'] });", /update returned the string "1.5" as the torque of joint 2$/],
    ['three.js', 'export default () => ({ update: () => [1, 2, 3] });', /^[^ ]*three\.js: update returned 3 torques for a 2-joint arm$/],
    ['nothing.js', 'export default () => ({ update() {} });', /update returned undefined; it must return 2 joint torques \[N m\]$/],
    ['throws-string.js', "export default () => ({ update() { throw 'overflow'; } });", /^[^ ]*throws-string\.js: update threw: overflow$/],
    [
      'proxy.js',
      "export default () => ({ update: () => new Proxy([0, 0], { get(t, k) { if (k === '1') throw new RangeError('sensor table'); return t[k]; } }) });",
      /^[^ ]*proxy\.js: update returned something that cannot be read: RangeError: sensor table$/,
    ],
    [
      'async-update.js',
      'export default () => ({ async update() { return [0, 0]; } });',
      /update returned a Promise; it must return the torques synchronously/,
    ],
  ];
  for (const [name, body, reason] of bad) {
    it(name, async () => {
      const pc = await PluggedController.load(module(name, body), context, UNTIMED);
      const out = [7, 7];
      const r = pc.step(restSample(pc, [-1.2, 0.3]), 0.002, out);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.reason).toMatch(reason);
      expect(out).toEqual([0, 0]);
    });
  }

  it('an update slower than the period, tick after tick, is a fault with the time it took', async () => {
    // Time is injected: each update "takes" 3 ms of wall time, none of it waiting for the CPU.
    const clock = { ms: 0, stolen: 0 };
    (globalThis as { twolinkTestClock?: typeof clock }).twolinkTestClock = clock;
    const file = module('slow.js', `export default () => ({ update() { globalThis.twolinkTestClock.ms += 3; return [0.1, 0.2]; } });`);
    const pc = await PluggedController.load(file, context, { now: () => clock.ms, stolenMs: () => clock.stolen });
    const out = [0, 0];
    const s = restSample(pc, [-1.2, 0.3]);
    // One slow call may be the machine's doing: the first two pass, the third in a row is a fault.
    expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    const r = pc.step(s, 0.001, out);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/^[^ ]*slow\.js: update took 3\.00 ms, longer than the loop period of 1\.00 ms, 3 ticks in a row$/);
    expect(out).toEqual([0, 0]);
  });

  it("time the operating system kept the controller's thread waiting is not the controller's: a starved machine is no controller fault", async () => {
    // Each update takes 3 ms of wall time, of which the thread waited 2.5 ms on the run queue (a busy
    // machine without real-time priority): 0.5 ms of its own, within the 1 ms period, tick after tick.
    const clock = { ms: 0, stolen: 0 };
    (globalThis as { twolinkTestClock?: typeof clock }).twolinkTestClock = clock;
    const file = module(
      'starved.js',
      `export default () => ({ update() { const c = globalThis.twolinkTestClock; c.ms += 3; c.stolen += 2.5; return [0.1, 0.2]; } });`,
    );
    const pc = await PluggedController.load(file, context, { now: () => clock.ms, stolenMs: () => clock.stolen });
    const out = [0, 0];
    const s = restSample(pc, [-1.2, 0.3]);
    for (let k = 0; k < 10; k++) expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    expect(out).toEqual([0.1, 0.2]);
    // A controller slow on its own account is still caught, and the message says what was taken off.
    const slow = module(
      'slow-starved.js',
      `export default () => ({ update() { const c = globalThis.twolinkTestClock; c.ms += 5; c.stolen += 2.5; return [0.1, 0.2]; } });`,
    );
    const ps = await PluggedController.load(slow, context, { now: () => clock.ms, stolenMs: () => clock.stolen });
    expect(ps.step(s, 0.001, out)).toEqual({ ok: true });
    expect(ps.step(s, 0.001, out)).toEqual({ ok: true });
    const r = ps.step(s, 0.001, out);
    expect(!r.ok && r.reason).toMatch(
      /slow-starved\.js: update took 2\.50 ms \(not counting 2\.50 ms the operating system kept its thread waiting\), longer than the loop period of 1\.00 ms, 3 ticks in a row$/,
    );
  });

  it("the stolen-time clock reads this thread's run-queue delay from Linux: finite, never going back", () => {
    const clock = stolenClockMs();
    if (process.platform !== 'linux') {
      expect(clock).toBeUndefined();
      return;
    }
    expect(clock).toBeDefined();
    let last = clock!();
    for (let k = 0; k < 100; k++) {
      const now = clock!();
      expect(Number.isFinite(now)).toBe(true);
      expect(now).toBeGreaterThanOrEqual(last);
      last = now;
    }
  });

  it('one slow tick between fast ones is not a fault', async () => {
    // Time is injected: every other update "takes" 3 ms, the others none (a real clock on a busy
    // machine would make the fast ones slow now and then too).
    const clock = { ms: 0 };
    (globalThis as { twolinkTestClock?: typeof clock }).twolinkTestClock = clock;
    const file = module(
      'slow-once.js',
      `let calls = 0;
       export default () => ({ update() { if (calls++ % 2 === 0) globalThis.twolinkTestClock.ms += 3; return [0.1, 0.2]; } });`,
    );
    const pc = await PluggedController.load(file, context, { now: () => clock.ms });
    const out = [0, 0];
    const s = restSample(pc, [-1.2, 0.3]);
    for (let k = 0; k < 6; k++) expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    expect(out).toEqual([0.1, 0.2]);
  });

  it('late on a fraction of its ticks: more than 10 of the last 100 slower than the period is a fault (docs/safety.md), never 3 in a row', async () => {
    // Time is injected: every other update "takes" 3 ms of a 1 ms period, the others none.
    const clock = { ms: 0 };
    (globalThis as { twolinkTestClock?: typeof clock }).twolinkTestClock = clock;
    const file = module(
      'slow-every-other.js',
      `let calls = 0; export default () => ({ update() { if (calls++ % 2 === 0) globalThis.twolinkTestClock.ms += 3; return [0.1, 0.2]; } });`,
    );
    const pc = await PluggedController.load(file, context, { now: () => clock.ms, stolenMs: null });
    const out = [0, 0];
    const s = restSample(pc, [-1.2, 0.3]);
    // Ticks 1, 3, ..., 19 are late: 10 of the last 100, within the rule; never two in a row.
    for (let k = 0; k < 20; k++) expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    // Tick 21 is the 11th late one.
    const r = pc.step(s, 0.001, out);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(
      /^[^ ]*slow-every-other\.js: update was slower than the loop period of 1\.00 ms on 11 of the last 100 ticks \(the rule: more than 10 of 100; this one took 3\.00 ms\)$/,
    );
    expect(out).toEqual([0, 0]);
  });

  it('one late tick in ten, for 1000 ticks, is within the rule; one more in a window of 100 is a fault', async () => {
    const clock = { ms: 0, extra: 0 };
    (globalThis as { twolinkTestClock?: typeof clock }).twolinkTestClock = clock;
    const file = module(
      'slow-one-in-ten.js',
      `let calls = 0; export default () => ({ update() { const c = globalThis.twolinkTestClock; if (calls++ % 10 === 0 || c.extra-- > 0) c.ms += 3; return [0.1, 0.2]; } });`,
    );
    const pc = await PluggedController.load(file, context, { now: () => clock.ms, stolenMs: null });
    const out = [0, 0];
    const s = restSample(pc, [-1.2, 0.3]);
    for (let k = 0; k < 1000; k++) expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    expect(out).toEqual([0.1, 0.2]);
    // Tick 1001 is late by rule (one in ten), 1002 one more: 11 in the window.
    expect(pc.step(s, 0.001, out)).toEqual({ ok: true });
    clock.extra = 1;
    expect(pc.step(s, 0.001, out)).toMatchObject({ ok: false, reason: expect.stringMatching(/on 11 of the last 100 ticks/) });
  });

  it('fill gives a frozen sample (arrays too), endpoints from the model', async () => {
    const pc = await PluggedController.load(
      module('echo.js', 'export default () => ({ update: (s) => [s.endpoint[0], s.endpointDesired[1]] });'),
      context,
    );
    const s = pc.fill(1.25, [0.3, 0.4], [1, -1], { q: [0.5, 0.6], qd: [2, 3], qdd: [4, 5] });
    expect(Object.isFrozen(s)).toBe(true);
    for (const a of [s.q, s.qd, s.qDesired, s.qdDesired, s.qddDesired, s.endpoint, s.endpointDesired])
      expect(Object.isFrozen(a)).toBe(true);
    expect(() => ((s.q as number[])[0] = 9)).toThrow(TypeError);
    expect(s).toMatchObject({ t: 1.25, q: [0.3, 0.4], qd: [1, -1], qDesired: [0.5, 0.6], qdDesired: [2, 3], qddDesired: [4, 5] });
    const out = [0, 0];
    expect(pc.step(s, 0.002, out)).toEqual({ ok: true });
    expect(out[0]).toBeCloseTo(armEndpoint(rig.arm, [0.3, 0.4])[0]!, 12);
    expect(out[1]).toBeCloseTo(armEndpoint(rig.arm, [0.5, 0.6])[1]!, 12);
  });
});

describe('the shipped examples', () => {
  const examples = ['examples/controllers/pd-gravity.js', 'examples/controllers/impedance.js'];
  const rigid = createRigidArmModel(rig.arm);
  const rigidData = createActuatedArmData(rigid);
  const m = {
    gravityTerms: (q: number[]) => computeGravity(rigid, rigidData, q).slice(),
    endpoint: (q: number[]) => armEndpoint(rig.arm, q),
  };

  for (const file of examples) {
    it(`${file}: at rest on the plan it holds the arm against gravity, tau = G(q)`, async () => {
      const pc = await PluggedController.load(file, context, UNTIMED);
      for (const q of [
        [-Math.PI / 2, 0],
        [-0.4, 1.1],
        [0.2, -0.7],
      ]) {
        const out = [0, 0];
        expect(pc.step(restSample(pc, q), 0.002, out)).toEqual({ ok: true });
        const g = m.gravityTerms(q);
        expect(out[0]).toBeCloseTo(g[0]!, 10);
        expect(out[1]).toBeCloseTo(g[1]!, 10);
      }
    });

    it(`${file}: closed loop on the true (heavier) arm, it tracks the reach within 1.5 deg RMS`, async () => {
      const pc = await PluggedController.load(file, context, UNTIMED);
      const spec = builtinPath(rig.arm, 'reach')!;
      const traj = buildPath(rig.arm, spec.start, spec.steps);
      // The true arm as the mock's plant integrates it: heavier, with its rotors and friction.
      const plant = createActuatedArmModel(plantModelSpec(rig.plant!));
      const dt = 0.002; // [s], the loop's period at 500 Hz
      let q = traj.sample(0).q.slice();
      let qd = [0, 0];
      const out = [0, 0];
      const sq = [0, 0];
      let n = 0;
      for (let k = 0; k * dt < traj.duration + 0.5; k++) {
        const d = traj.sample(k * dt);
        const r = pc.step(pc.fill(k * dt, q, qd, d), dt, out);
        expect(r).toEqual({ ok: true });
        const next = simulate(plant, { q0: q, qd0: qd, duration: dt, dt: 1e-4, torque: out.slice() });
        q = next.q;
        qd = next.qd;
        const e = traj.sample((k + 1) * dt);
        for (let i = 0; i < 2; i++) sq[i]! += (((e.q[i]! - q[i]!) * 180) / Math.PI) ** 2;
        n++;
      }
      for (let i = 0; i < 2; i++) expect(Math.sqrt(sq[i]! / n)).toBeLessThan(1.5);
    });
  }

  it('impedance: an endpoint displaced by dx gives tau - G = J^T K dx', async () => {
    const pc = await PluggedController.load('examples/controllers/impedance.js', context, UNTIMED);
    const qDes = [-0.5, 1.2];
    const xDes = m.endpoint(qDes);
    const q = [-0.45, 1.1];
    const x = m.endpoint(q);
    const out = [0, 0];
    expect(pc.step(pc.fill(0, q, [0, 0], { q: qDes, qd: [0, 0], qdd: [0, 0] }), 0.002, out)).toEqual({ ok: true });
    const J = context.model.jacobian(q);
    const g = m.gravityTerms(q);
    const dx = [xDes[0]! - x[0]!, xDes[1]! - x[1]!];
    // K from the torques: tau - G = K J^T dx, the same K for both joints.
    const jt = [J[0]![0]! * dx[0]! + J[1]![0]! * dx[1]!, J[0]![1]! * dx[0]! + J[1]![1]! * dx[1]!];
    const k0 = (out[0]! - g[0]!) / jt[0]!;
    const k1 = (out[1]! - g[1]!) / jt[1]!;
    expect(k0).toBeGreaterThan(0);
    expect(k1).toBeCloseTo(k0, 6);
  });
});
