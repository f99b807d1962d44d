// HIL suites without running the loop: reading and checking suite files (every error names the file,
// the scenario and the field), the expectations against measured figures, the table and the JUnit XML
// (parsed back with an XML parser, as a CI system would read it).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../src/hil/expect.js';
import { formatTable, junitXml, type ScenarioResult, type SuiteReport } from '../src/hil/report.js';
import { loadSuite, parseSuite } from '../src/hil/suite.js';
import type { RunSummary } from '../src/run/stats.js';
import { describeStop, type StopReason } from '../src/control/stop.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-hil-'));
const rigPath = relative(dir, 'rigs/mock-arm.json');

function suiteFile(name: string, content: unknown): string {
  const f = join(dir, name);
  writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return relative(process.cwd(), f);
}

const reach = (extra: object = {}): object => ({ name: 'reach', rig: rigPath, traj: 'reach', expect: { maxRmsDeg: 0.5 }, ...extra });

/** A summary as RunStats makes one: its stop a value, its `stopReason` the words for it. */
function summary(over: Partial<RunSummary> = {}): RunSummary {
  const stop = over.stop ?? { kind: 'done' };
  return {
    ticks: 2236,
    rateHz: 500,
    period: { p50Us: 0, p99Us: 0, maxUs: 0 },
    overruns: 0,
    tracking: { rmsDeg: [0.04, 0.15], maxDeg: [0.13, 0.4], samples: 1800 },
    twin: { rmsDeg: [0.32, 0.4], maxDeg: [0.63, 1.1], alarms: 0, tauExtRmsNm: [0.01, 0.01] },
    link: { sent: 2236, received: 2236, lost: 0, corrupt: 0 },
    ...over,
    stop,
    stopReason: describeStop(stop),
  };
}

describe('suite files', () => {
  it('the shipped suite: rig, trajectories, injections, controller resolved against its folder', () => {
    const s = loadSuite('examples/hil/suite.json');
    expect(s.name).toBe('mock-arm');
    expect(s.notices).toEqual([]);
    const names = s.scenarios.map((x) => x.name);
    expect(names).toEqual(expect.arrayContaining(['reach', 'payload', 'lost link', 'feedforward off']));
    const byName = Object.fromEntries(s.scenarios.map((x) => [x.name, x]));
    expect(byName['reach']!.rig.plant).toBeDefined();
    expect(byName['reach']!.paths[0]!.name).toBe('reach');
    expect(byName['payload']!.injections).toEqual([{ name: 'payload', value: '0.25', at: 2.2 }]);
    expect(byName['lost link']!.expect.stopWithinMs).toBe(150);
    expect(byName['feedforward off']!.feedforward).toBe('none');
    expect(byName['reach']!.expect.stopReason).toBe('done'); // the default
    const withController = s.scenarios.find((x) => x.controller);
    expect(withController?.controller).toBe('examples/controllers/pd-gravity.js');
  });

  const bad: [string, unknown, RegExp][] = [
    ['not JSON', '{ "scenarios": [ }', /^.*bad-json\.json: line 1, column \d+: invalid JSON/],
    ['no scenarios', { scenarios: [] }, /: scenarios: .*(>=1|at least 1|too small)/i],
    [
      'an unknown key, named with its scenario',
      { scenarios: [reach(), reach({ name: 'second', expct: {} })] },
      /: scenarios\[1\] \("second"\)\.expct: unknown key \(a typo\?\)/,
    ],
    [
      'a limit that is not a number',
      { scenarios: [reach({ expect: { maxRmsDeg: 'small' } })] },
      /: scenarios\[0\] \("reach"\)\.expect\.maxRmsDeg: .*\(got "small"\)/,
    ],
    [
      'a negative limit',
      { scenarios: [reach({ expect: { maxErrorDeg: -1 } })] },
      /: scenarios\[0\] \("reach"\)\.expect\.maxErrorDeg: .*\(got -1\)/,
    ],
    [
      'a bad injection',
      { scenarios: [reach({ injections: ['payload=0.2@x'] })] },
      /: scenarios\[0\] \("reach"\)\.injections\[0\]: "payload=0.2@x": the time after @ "x" is not a number of s/,
    ],
    [
      'an unknown injection',
      { scenarios: [reach({ injections: ['gremlins@1'] })] },
      /: scenarios\[0\] \("reach"\)\.injections\[0\]: "gremlins@1": unknown injection "gremlins"; injections: payload, /,
    ],
    [
      'a bad value under the old key, named by it',
      { scenarios: [reach({ faults: ['payload=-1'] })] },
      /: scenarios\[0\] \("reach"\)\.faults\[0\]: "payload=-1": the payload -1 kg is out of range/,
    ],
    [
      'both the old and the new key',
      { scenarios: [reach({ faults: ['silent@1'], injections: ['silent@1'] })] },
      /: scenarios\[0\] \("reach"\)\.faults: the old name of "injections": give only "injections"/,
    ],
    [
      'a joint the arm lacks',
      { scenarios: [reach({ injections: ['stall=3@1'] })] },
      /\.injections\[0\]: "stall=3@1": the joint "3" must be 1\.\.2 \(this arm has 2 joints\)/,
    ],
    [
      'an unknown trajectory',
      { scenarios: [reach({ traj: ['reach', 'wave'] })] },
      /: scenarios\[0\] \("reach"\)\.traj\[1\]: unknown trajectory "wave": built-ins for this arm are /,
    ],
    ['a missing rig file', { scenarios: [reach({ rig: 'nope.json' })] }, /: scenarios\[0\] \("reach"\)\.rig: .*nope\.json: no such file/],
    [
      'a rig without a plant',
      { scenarios: [reach({ rig: relative(dir, 'rigs/bench-arm.json') })] },
      /: scenarios\[0\] \("reach"\)\.rig: .*bench-arm\.json has no "plant" section/,
    ],
    [
      'per-joint limits of the wrong length',
      { scenarios: [reach({ expect: { maxTwinRmsDeg: [1] } })] },
      /\.expect\.maxTwinRmsDeg: 1 limits for a 2-joint arm/,
    ],
    [
      'two scenarios with one name',
      { scenarios: [reach(), reach()] },
      /: scenarios\[1\] \("reach"\)\.name: another scenario has this name/,
    ],
    [
      'stopWithinMs without an injection',
      { scenarios: [reach({ expect: { stopWithinMs: 100 } })] },
      /\.expect\.stopWithinMs: is measured from the first injection: give "injections"/,
    ],
    ['a bad wiring', { scenarios: [reach({ wiring: 'reverse-motor=3' })] }, /: scenarios\[0\] \("reach"\)\.wiring: .*joint number/],
    [
      'a missing controller',
      { scenarios: [reach({ controller: 'gone.js' })] },
      /: scenarios\[0\] \("reach"\)\.controller: no such file .*gone\.js/,
    ],
    [
      'twinAlarms min above max',
      { scenarios: [reach({ expect: { twinAlarms: { min: 3, max: 1 } } })] },
      /\.expect\.twinAlarms: min 3 is above max 1/,
    ],
  ];
  for (const [what, content, message] of bad) {
    it(`refused: ${what}`, () => {
      const f = suiteFile(what === 'not JSON' ? 'bad-json.json' : `${what.replace(/\W+/g, '-')}.json`, content);
      let err: unknown;
      try {
        loadSuite(f);
      } catch (e) {
        err = e;
      }
      expect((err as Error)?.name).toBe('RigFileError');
      expect((err as Error).message.startsWith(`${f}: `)).toBe(true);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('the old key "faults" still works, with one notice naming the file, the scenario and the new key', () => {
    const f = suiteFile('old-key.json', {
      scenarios: [reach({ faults: ['silent@1.5'], expect: { stopReason: 'fault:link-lost', stopWithinMs: 150 } })],
    });
    const s = loadSuite(f);
    expect(s.scenarios[0]!.injections).toEqual([{ name: 'silent', at: 1.5 }]);
    expect(s.notices).toEqual([
      `${f}: scenarios[0] ("reach").faults is deprecated: rename it to "injections" (same values; "fault" now means only a safety stop the loop declares)`,
    ]);
  });

  it('a missing suite file', () => {
    expect(() => loadSuite('no/such/suite.json')).toThrow(/^no\/such\/suite\.json: no such file$/);
  });

  it('parseSuite names the file it is given', () => {
    expect(() => parseSuite({ scenarios: 3 }, 'inline.json')).toThrow(/^inline\.json: scenarios: /);
  });
});

describe('expectations against measured figures', () => {
  const reachLimits = { stopReason: 'done', maxRmsDeg: 0.5, maxErrorDeg: 1.5, maxTwinRmsDeg: 1, twinAlarms: 0 };

  it('a run within every limit passes, each figure with its measured value and limit', () => {
    const f = evaluate(reachLimits, { summary: summary() });
    expect(f.map((x) => x.key)).toEqual(['stopReason', 'maxRmsDeg', 'maxErrorDeg', 'maxTwinRmsDeg', 'twinAlarms']);
    expect(f.every((x) => x.pass)).toBe(true);
    expect(f.find((x) => x.key === 'maxRmsDeg')).toMatchObject({ measured: '0.040, 0.150', limit: '<= 0.500' });
  });

  it('one joint over its limit fails that figure, and only that one', () => {
    const f = evaluate(reachLimits, { summary: summary({ tracking: { rmsDeg: [0.04, 0.71], maxDeg: [0.1, 0.2], samples: 10 } }) });
    expect(f.filter((x) => !x.pass)).toEqual([
      { key: 'maxRmsDeg', label: 'tracking RMS [deg]', measured: '0.040, 0.710', limit: '<= 0.500', pass: false },
    ]);
  });

  it('per-joint limits apply joint by joint', () => {
    const f = evaluate({ stopReason: 'done', maxErrorDeg: [0.1, 1] }, { summary: summary() });
    expect(f[1]).toMatchObject({ measured: '0.130, 0.400', limit: '<= 0.100, 1.000', pass: false });
  });

  const lostStop: StopReason = { kind: 'fault', fault: { kind: 'link-lost', ms: 50, samples: 25 } };

  it('the stop reason by kind path: the kind, a fault of any kind, or one kind of fault; anything else fails with what it was', () => {
    const lost = summary({ stop: lostStop });
    for (const path of ['fault', 'fault.link-lost'])
      expect(evaluate({ stopReason: path }, { summary: lost })[0], path).toMatchObject({ pass: true, limit: `kind ${path}` });
    for (const path of ['done', 'fault.watchdog', 'estop', 'timeout'])
      expect(evaluate({ stopReason: path }, { summary: lost })[0]!.pass, path).toBe(false);
    const f = evaluate({ stopReason: 'done' }, { summary: lost })[0]!;
    expect(f).toMatchObject({ pass: false, measured: 'fault:link-lost (no telemetry for 25 samples, 50 ms)', limit: 'kind done' });
    // the notes after a stop do not change its kind
    expect(
      evaluate(
        { stopReason: 'fault.link-lost' },
        { summary: summary({ stop: { ...lostStop, rigStarved: { maxMs: 30, totalMs: 40 } } }) },
      )[0]!.pass,
    ).toBe(true);
    expect(evaluate({ stopReason: 'estop' }, { summary: summary({ stop: { kind: 'estop', by: 'key' } }) })[0]!.pass).toBe(true);
    expect(evaluate({ stopReason: 'timeout' }, { summary: summary({ stop: { kind: 'timeout', seconds: 1 } }) })[0]!.pass).toBe(true);
  });

  it("the old form, the start of the stop's text, stays an alias: it matches as it did", () => {
    const lost = summary({ stop: lostStop });
    expect(evaluate({ stopReason: 'fault:link-lost' }, { summary: lost })[0]).toMatchObject({
      pass: true,
      limit: 'starts with fault:link-lost',
    });
    expect(evaluate({ stopReason: 'fault:' }, { summary: lost })[0]!.pass).toBe(true);
    expect(evaluate({ stopReason: 'fault:link-lost (no telemetry for 25 samples, 50 ms)' }, { summary: lost })[0]).toMatchObject({
      pass: true,
      limit: '= fault:link-lost (no telemetry for 25 samples, 50 ms)',
    });
    expect(evaluate({ stopReason: 'fault:watchdog' }, { summary: lost })[0]!.pass).toBe(false);
    expect(
      evaluate({ stopReason: 'interrupted:SIGINT' }, { summary: summary({ stop: { kind: 'interrupted', signal: 'SIGINT' } }) })[0]!.pass,
    ).toBe(true);
  });

  it('a suite that names no stop kind is refused, naming the kinds there are', () => {
    const f = suiteFile('bad-kind.json', { scenarios: [reach({ expect: { stopReason: 'fault.link-lots' } })] });
    expect(() => loadSuite(f)).toThrow(
      /scenarios\[0\] \("reach"\)\.expect\.stopReason: "fault\.link-lots" is no stop kind: give one of done, quit, .*fault\.link-lost/,
    );
    expect(
      loadSuite(suiteFile('good-kind.json', { scenarios: [reach({ expect: { stopReason: 'fault.following-error' } })] })).scenarios[0]!
        .expect.stopReason,
    ).toBe('fault.following-error');
  });

  it('twin alarms: a count, or a range', () => {
    expect(
      evaluate({ stopReason: 'done', twinAlarms: 0 }, { summary: summary({ twin: { ...summary().twin, alarms: 2 } }) })[1],
    ).toMatchObject({ measured: '2', limit: '= 0', pass: false });
    expect(
      evaluate({ stopReason: 'done', twinAlarms: { min: 1 } }, { summary: summary({ twin: { ...summary().twin, alarms: 3 } }) }).find(
        (x) => x.key === 'twinAlarms',
      ),
    ).toMatchObject({ limit: '>= 1', pass: true });
  });

  it('stopWithinMs: the stop delay the engine measured, or that it never stopped', () => {
    const lost = summary({ stop: lostStop });
    const ok = evaluate({ stopReason: 'fault.link-lost', stopWithinMs: 100 }, { summary: lost, stopMs: 52.5 });
    expect(ok[1]).toMatchObject({ key: 'stopWithinMs', measured: '52.500', limit: '<= 100', pass: true });
    const slow = evaluate({ stopReason: 'fault.link-lost', stopWithinMs: 20 }, { summary: lost, stopMs: 52.5 });
    expect(slow[1]).toMatchObject({ measured: '52.500', limit: '<= 20.000', pass: false });
    expect(evaluate({ stopReason: 'done', stopWithinMs: 20 }, { summary: summary(), stopMs: 'never' })[1]).toMatchObject({
      measured: 'never stopped',
      pass: false,
    });
  });
});

describe('the report: table and JUnit XML', () => {
  const reachFigures = evaluate({ stopReason: 'done', maxRmsDeg: 0.5 }, { summary: summary() });
  const failFigures = evaluate({ stopReason: 'done', maxRmsDeg: 0.01 }, { summary: summary() });
  const results: ScenarioResult[] = [
    { index: 0, name: 'reach', status: 'pass', figures: reachFigures, seconds: 1.25, loopSeconds: 4.47, summary: summary() },
    { index: 1, name: 'tight <&> "limits"', status: 'fail', figures: failFigures, seconds: 1.5, loopSeconds: 4.47, summary: summary() },
    {
      index: 2,
      name: 'broken',
      status: 'error',
      figures: [],
      seconds: 0.01,
      loopSeconds: 0,
      error: 'link: board said \u0001\u0002 garbage & more',
    },
  ];
  const report: SuiteReport = {
    name: 'mock-arm',
    file: 'examples/hil/suite.json',
    clock: 'virtual',
    startedAt: '2026-11-23T01:00:00.000Z',
    results,
  };

  it('the table has a row per scenario with its figures, and the count', () => {
    const t = formatTable(report);
    expect(t).toMatch(/^reach\s+PASS\s+stop reason: done {2}\(kind done\)$/m);
    expect(t).toMatch(/^tight <&> "limits"\s+FAIL\s+stop reason/m);
    expect(t).toMatch(/^\s+! tracking RMS \[deg\]: 0\.040, 0\.150 {2}\(<= 0\.010\)$/m);
    expect(t).toMatch(/^broken\s+ERROR\s+link: board said/m);
    expect(t).toMatch(/1 of 3 scenarios passed; 2 failed\n$/);
  });

  it('JUnit XML: one testcase per scenario, failure with the figures, error with the reason', () => {
    const xml = junitXml(report);
    const errors: string[] = [];
    // (xmldom warns about U+FFFD in the text: that is the replacement of the control characters, below)
    const doc = new DOMParser({ onError: (level, msg) => level !== 'warning' && errors.push(`${level}: ${msg}`) }).parseFromString(
      xml,
      'text/xml',
    );
    expect(errors).toEqual([]);
    const root = doc.documentElement!;
    expect(root.tagName).toBe('testsuites');
    expect(root.getAttribute('tests')).toBe('3');
    expect(root.getAttribute('failures')).toBe('1');
    expect(root.getAttribute('errors')).toBe('1');
    const suite = root.getElementsByTagName('testsuite')[0]!;
    expect(suite.getAttribute('name')).toBe('mock-arm');
    expect(suite.getAttribute('timestamp')).toBe('2026-11-23T01:00:00');
    expect(Number(suite.getAttribute('time'))).toBeCloseTo(2.76, 3);
    const cases = Array.from(suite.getElementsByTagName('testcase'));
    expect(cases.map((c) => c.getAttribute('name'))).toEqual(['reach', 'tight <&> "limits"', 'broken']);
    expect(cases.map((c) => c.getAttribute('classname'))).toEqual(['hil.mock-arm', 'hil.mock-arm', 'hil.mock-arm']);
    expect(cases[0]!.getElementsByTagName('failure').length).toBe(0);
    const failure = cases[1]!.getElementsByTagName('failure')[0]!;
    expect(failure.getAttribute('message')).toBe('maxRmsDeg: 0.040, 0.150 (limit <= 0.010)');
    expect(failure.textContent).toContain('FAIL maxRmsDeg: tracking RMS [deg] 0.040, 0.150 (limit <= 0.010)');
    expect(failure.textContent).toContain('ok   stopReason: stop reason done (limit kind done)');
    const error = cases[2]!.getElementsByTagName('error')[0]!;
    // Control characters XML cannot hold are replaced; the rest of the message survives, escaped.
    expect(error.getAttribute('message')).toBe('link: board said \uFFFD\uFFFD garbage & more');
    expect(cases[0]!.getElementsByTagName('system-out')[0]!.textContent).toMatch(/summary \{"ticks":2236/);
  });
});
