// `twolink hil` as CI runs it (the built CLI, virtual time): the shipped suite passes with exit code 0
// and valid JUnit XML; a scenario made to fail fails with its figure, in the table and in the XML, and
// the exit code is 1; a bad suite is one line and exit code 2.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { ROOT, twolink } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-hil-cli-'));

/** Parses JUnit XML strictly (any parser error fails the test) and returns its testcases. */
function junit(file: string): { root: Element; cases: Element[] } {
  const problems: string[] = [];
  const doc = new DOMParser({ onError: (level, msg) => level !== 'warning' && problems.push(msg) }).parseFromString(
    readFileSync(file, 'utf8'),
    'text/xml',
  );
  expect(problems).toEqual([]);
  const root = doc.documentElement;
  if (!root) throw new Error(`${file}: no root element`);
  return { root, cases: Array.from(root.getElementsByTagName('testcase')) };
}

describe('twolink hil', () => {
  it('the shipped suite: every scenario passes, the table, exit code 0, JUnit XML with a testcase each', async () => {
    const xml = join(dir, 'suite.xml');
    const r = await twolink(['hil', 'examples/hil/suite.json', '--junit', xml], { timeoutMs: 120_000 });
    expect(r.stderr).toContain(`JUnit XML: ${xml}`);
    expect(r.code).toBe(0);
    for (const name of ['reach', 'payload', 'lost link', 'feedforward off', 'reach over Firmata'])
      expect(r.stdout).toMatch(new RegExp(`^${name}\\s+PASS\\s+stop reason: `, 'm'));
    expect(r.stdout).toMatch(/^\s+twin alarms: [1-9]\d* {2}\(>= 1\)$/m); // the payload is seen by the twin
    expect(r.stdout).toMatch(/^\s+stopped after the injection \[ms\]: \d+(\.\d+)? {2}\(<= 150\)$/m);
    expect(r.stdout).toMatch(/^(\d+) of \1 scenarios passed$/m);
    const { root, cases } = junit(xml);
    expect(root.getAttribute('failures')).toBe('0');
    expect(root.getAttribute('errors')).toBe('0');
    expect(cases.length).toBe(Number(root.getAttribute('tests')));
    expect(cases.map((c) => c.getAttribute('name'))).toEqual(expect.arrayContaining(['reach', 'payload', 'lost link', 'feedforward off']));
    for (const c of cases) expect(c.getElementsByTagName('failure').length + c.getElementsByTagName('error').length).toBe(0);
  });

  it('a scenario made to fail: FAIL with its figure in the table and in a failure element, exit code 1', async () => {
    const suite = join(dir, 'tight.json');
    writeFileSync(
      suite,
      JSON.stringify({
        name: 'tight',
        scenarios: [
          { name: 'point ok', rig: join(ROOT, 'rigs/mock-arm.json'), traj: 'point', expect: { maxRmsDeg: 1 } },
          { name: 'point too tight', rig: join(ROOT, 'rigs/mock-arm.json'), traj: 'point', expect: { maxRmsDeg: 0.001, twinAlarms: 0 } },
        ],
      }),
    );
    const xml = join(dir, 'tight.xml');
    const r = await twolink(['hil', suite, '--junit', xml], { timeoutMs: 120_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^point ok\s+PASS/m);
    expect(r.stdout).toMatch(/^point too tight\s+FAIL/m);
    const figure = /^\s+! tracking RMS \[deg\]: (\d+\.\d+), (\d+\.\d+) {2}\(<= 0\.001\)$/m.exec(r.stdout);
    expect(figure).not.toBeNull();
    expect(Math.max(Number(figure![1]), Number(figure![2]))).toBeGreaterThan(0.001);
    expect(r.stdout).toMatch(/^1 of 2 scenarios passed; 1 failed$/m);
    const { root, cases } = junit(xml);
    expect(root.getAttribute('failures')).toBe('1');
    const failure = cases[1]!.getElementsByTagName('failure')[0]!;
    expect(failure.getAttribute('message')).toBe(`maxRmsDeg: ${figure![1]}, ${figure![2]} (limit <= 0.001)`);
    expect(failure.textContent).toContain('ok   twinAlarms: twin alarms 0 (limit = 0)');
    expect(cases[0]!.getElementsByTagName('failure').length).toBe(0);
  });

  it('examples/hil/cut-short.json: the scenario cut short by maxSeconds fails (timeout, not done), exit code 1; the one expecting it passes', async () => {
    const xml = join(dir, 'cut-short.xml');
    const r = await twolink(['hil', 'examples/hil/cut-short.json', '--junit', xml], { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^cut short\s+FAIL\s+! stop reason: timeout: the run's time limit of 1 s came before its trajectories were done {2}\(kind done\)$/m,
    );
    expect(r.stdout).toMatch(/^cut short on purpose\s+PASS\s+stop reason: timeout: /m);
    expect(r.stdout).toMatch(/^1 of 2 scenarios passed; 1 failed$/m);
    const { root } = junit(xml);
    expect(root.getAttribute('failures')).toBe('1');
  });

  it('a bad suite: one line naming the file, the scenario and the field, exit code 2', async () => {
    const suite = join(dir, 'bad.json');
    writeFileSync(
      suite,
      JSON.stringify({ scenarios: [{ name: 'r', rig: join(ROOT, 'rigs/mock-arm.json'), traj: 'reach', expect: { maxRmsDeg: '1' } }] }),
    );
    const r = await twolink(['hil', suite]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `twolink: ${suite}: scenarios[0] ("r").expect.maxRmsDeg: Invalid input: expected number, received string (got "1")\n`,
    );
  });

  it('--junit into a folder that does not exist is refused before anything runs', async () => {
    const r = await twolink(['hil', 'examples/hil/suite.json', '--junit', join(dir, 'no/such/dir/out.xml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^twolink: --junit .*out\.xml: the folder .*no\/such\/dir does not exist\n$/);
    expect(r.stdout).toBe('');
  });

  it('--rt and --no-rt: only with --realtime, and not both (real time asks for SCHED_FIFO by default, as run and rig do)', async () => {
    for (const [args, why] of [
      [['--no-rt'], /^twolink: --no-rt needs --realtime /],
      [['--rt'], /^twolink: --rt needs --realtime /],
      [['--realtime', '--rt', '--no-rt'], /^twolink: hil: --rt and --no-rt contradict each other: give one of them/],
    ] as const) {
      const r = await twolink(['hil', 'examples/hil/suite.json', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stdout).toBe('');
    }
  });
});
