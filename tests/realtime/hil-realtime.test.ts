// `twolink hil --realtime`: the scenario runs against `twolink rig --pty` in its own process, in real
// time, and the report says so. The figures depend on the machine's load (a starved rig process can
// lose the link on its own), so this checks the mechanics and that the exit code agrees with the table.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { ROOT, twolink } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-hil-rt-'));

describe('twolink hil --realtime', () => {
  it('a lost link on the pty rig: the table in real time, JUnit XML, an exit code that matches', async () => {
    const suite = join(dir, 'rt.json');
    writeFileSync(
      suite,
      JSON.stringify({
        name: 'rt',
        scenarios: [{ name: 'lost link', rig: join(ROOT, 'rigs/mock-arm.json'), traj: 'point', injections: ['silent@1'], expect: { stopReason: 'fault:', stopWithinMs: 1000 } }],
      }),
    );
    const xml = join(dir, 'rt.xml');
    const r = await twolink(['hil', suite, '--realtime', '--junit', xml], { timeoutMs: 120_000 });
    expect(r.stdout).toMatch(/^rt \(.*rt\.json\), real time$/m);
    const row = /^lost link\s+(PASS|FAIL)\s+stop reason: (fault:\S+)/m.exec(r.stdout);
    expect(row, `stdout:\n${r.stdout}\nstderr:\n${r.stderr}`).not.toBeNull();
    expect(r.code).toBe(row![1] === 'PASS' ? 0 : 1);
    if (row![1] === 'PASS') expect(r.stdout).toMatch(/^\s+stopped after the injection \[ms\]: \d+(\.\d+)? {2}\(<= 1000\)$/m);
    const problems: string[] = [];
    const doc = new DOMParser({ onError: (level, msg) => level !== 'warning' && problems.push(msg) }).parseFromString(readFileSync(xml, 'utf8'), 'text/xml');
    expect(problems).toEqual([]);
    const props = Array.from(doc.getElementsByTagName('property')).map((p) => [p.getAttribute('name'), p.getAttribute('value')]);
    expect(props).toContainEqual(['clock', 'real']);
    expect(doc.getElementsByTagName('testcase').length).toBe(1);
  });
});
