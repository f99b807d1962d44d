// `twolink hil --realtime`: the scenario runs against `twolink rig --pty` in its own process, in real
// time, and the report says so. The figures depend on the machine's load (a starved rig process can
// lose the link on its own), so this checks the mechanics and that the exit code agrees with the table.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BIN, ROOT, twolink } from '../helpers/cli.js';
import { parseMockReport, type MockReport } from '../../src/mock/mock-report.js';
import { realtimeEngine } from '../../src/hil/engines.js';
import { runScenario } from '../../src/hil/run.js';
import { parseSuite } from '../../src/hil/suite.js';
import { own } from '../helpers/owned-children.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-hil-rt-'));

describe('twolink hil --realtime', () => {
  it('a lost link on the pty rig: the table in real time, JUnit XML, an exit code that matches', async () => {
    const suite = join(dir, 'rt.json');
    writeFileSync(
      suite,
      JSON.stringify({
        name: 'rt',
        scenarios: [
          {
            name: 'lost link',
            rig: join(ROOT, 'rigs/mock-arm.json'),
            traj: 'point',
            injections: ['silent@1'],
            expect: { stopReason: 'fault', stopWithinMs: 1000 },
          },
        ],
      }),
    );
    const xml = join(dir, 'rt.xml');
    // The rig's injection time counts from the host's handshake (src/cli/rig-command.ts), so a busy machine
    // that holds the host up past 1 s still meets silent@1 1 s into its session: one run.
    const r = await twolink(['hil', suite, '--realtime', '--junit', xml], { timeoutMs: 120_000 });
    expect(r.stdout).toMatch(/^rt \(.*rt\.json\), real time, real-time scheduling (\(SCHED_FIFO\) on|off)$/m);
    if (process.getuid?.() === 0) expect(r.stdout).toMatch(/, real time, real-time scheduling \(SCHED_FIFO\) on$/m);
    const row = /^lost link\s+(PASS|FAIL)\s+stop reason: (fault:\S+)/m.exec(r.stdout);
    expect(row, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).not.toBeNull();
    expect(r.code).toBe(row![1] === 'PASS' ? 0 : 1);
    if (row![1] === 'PASS') expect(r.stdout).toMatch(/^\s+stopped after the injection \[ms\]: \d+(\.\d+)? {2}\(<= 1000\)$/m);
    const problems: string[] = [];
    const doc = new DOMParser({ onError: (level, msg) => level !== 'warning' && problems.push(msg) }).parseFromString(
      readFileSync(xml, 'utf8'),
      'text/xml',
    );
    expect(problems).toEqual([]);
    const props = Array.from(doc.getElementsByTagName('property')).map((p) => [p.getAttribute('name'), p.getAttribute('value')]);
    expect(props).toContainEqual(['clock', 'real']);
    expect(doc.getElementsByTagName('testcase').length).toBe(1);
  });
});

describe('the pty rig reports to a program in JSON lines (--report), read with the schema', () => {
  it('twolink rig --report: the injection it refuses, the host end of its pty, then serving', async () => {
    // The Firmata mock has no line-protocol wire: `garbage` is refused, and the rig serves on.
    const child = spawn(
      process.execPath,
      [BIN, 'rig', '--rig', 'rigs/mock-arm-firmata.json', '--pty', '--report', '--no-rt', '--inject', 'garbage=10@5'],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    own(child);
    const reports: MockReport[] = [];
    await new Promise<void>((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`twolink rig exited (${code}) before serving`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const r = parseMockReport(line);
        reports.push(r);
        if (r.kind === 'serving') resolve();
      });
    });
    child.kill('SIGTERM');
    expect(reports.map((r) => r.kind)).toEqual(['refused', 'pty', 'serving']);
    expect(reports[0]).toEqual({
      kind: 'refused',
      injection: 'garbage',
      why: expect.stringMatching(/^garbage acts on .*, which the pty rig does not have$/),
    });
    expect(reports[1]).toEqual({ kind: 'pty', host: expect.stringMatching(/^\/dev\/pts\/\d+$|^\//) });
  });

  it('a HIL scenario with an injection the pty rig refuses is an error before the run, naming it (its report, not its words on stderr)', async () => {
    const suite = parseSuite(
      {
        scenarios: [
          {
            name: 'wire on firmata',
            rig: join(ROOT, 'rigs/mock-arm-firmata.json'),
            traj: 'point',
            injections: ['garbage=10@1'],
            expect: {},
          },
        ],
      },
      join(dir, 'refused.json'),
    );
    const r = await runScenario(suite.scenarios[0]!, realtimeEngine());
    expect(r).toMatchObject({
      status: 'error',
      error: expect.stringMatching(
        /^injection garbage is not available on the pty rig: garbage acts on .*: run this scenario in virtual time$/,
      ),
    });
  });
});
