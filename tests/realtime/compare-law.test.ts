// At the command line (issue 35, items 3 and 6): a `--controller` run recorded to MCAP, a `--mode
// float` run and a `--mode impedance` run, each named by its law in `twolink compare`; `compare`,
// `plot` and `--export csv` read the MCAP (before, `compare x.mcap` said "not JSON").
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lastJson, twolink, whyExit } from '../helpers/cli.js';
import { hangGuardMs } from '../helpers/hang-guard.js';

const dir = mkdtempSync(join(tmpdir(), 'twolink-compare-law-'));
const CONTROLLER = 'examples/controllers/pd-gravity.js';
const BASE = ['run', '--rig', 'rigs/mock-arm.json', '--mock'];
const ctl = join(dir, 'controller.mcap');
const float = join(dir, 'float.ndjson');
const imp = join(dir, 'impedance.ndjson');
let firstLine: string | undefined;

beforeAll(async () => {
  const runs = [
    { args: [...BASE, '--headless', '--traj', 'point', '--controller', CONTROLLER, '--record', ctl] },
    // Float holds until told otherwise: the time limit ends it (exit 4).
    { args: [...BASE, '--json', '--mode', 'float', '--traj', 'hold', '--max-seconds', '1.5', '--record', float] },
    { args: [...BASE, '--json', '--mode', 'impedance', '--traj', 'point', '--record', imp] },
  ];
  for (const r of runs) {
    const res = await twolink(r.args, { timeoutMs: 90_000 });
    // The law is recorded however the run ends: done (0), the float's time limit (4), or a fault of a
    // starved machine (1); not bad input (2) or no connection (3).
    expect([0, 1, 4], whyExit(res)).toContain(res.code);
    if (r.args.includes('--controller')) firstLine = res.stderr.split('\n').find((l) => l.startsWith('twolink run:'));
  }
}, hangGuardMs(300_000));

describe('compare names the law of each run', () => {
  it("the run's first line names the controller, as its recording does", () => {
    const sha = createHash('sha256').update(readFileSync(CONTROLLER)).digest('hex');
    expect(firstLine).toBe(`twolink run: point on mock-arm at 500 Hz, law: controller ${CONTROLLER} (sha256 ${sha.slice(0, 12)})`);
  });

  it('a --controller run (MCAP) and a float run: the controller by file and SHA-256, float with its settings', async () => {
    const r = await twolink(['compare', ctl, float], { timeoutMs: 60_000 });
    expect(r.code, whyExit(r)).toBe(0);
    const sha = createHash('sha256').update(readFileSync(CONTROLLER)).digest('hex');
    const [a, b] = r.stdout.split('\n');
    expect(a).toMatch(
      new RegExp(
        `^A  ${ctl}: mock-arm, point, 500 Hz, \\d+ ticks \\(\\d+\\.\\d\\d s\\), law: controller ${CONTROLLER} \\(sha256 ${sha.slice(0, 12)}\\), stop: `,
      ),
    );
    expect(b).toMatch(/, law: float \(friction assist 1, torque cap [\d./]+ N m, speed cap [\d/]+ deg\/s\), stop: /);
    const json = lastJson(await twolink(['compare', ctl, float, '--json'], { timeoutMs: 60_000 }));
    expect(json.runs[0].law).toEqual({ kind: 'controller', file: CONTROLLER, sha256: sha });
    expect(json.runs[0].format).toBe('mcap');
    expect(json.runs[1].law.kind).toBe('float');
  });

  it('an impedance run: its space, stiffness and damping ratio', async () => {
    const r = await twolink(['compare', imp], { timeoutMs: 60_000 });
    expect(r.code, whyExit(r)).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/, law: impedance \(endpoint space, stiffness [\d.]+ N\/m, damping ratio [\d.]+\), stop: /);
  });
});

describe('compare, plot and the CSV export read the MCAP of `run --record F.mcap`', () => {
  it('compare --plot, plot, and --export csv: each writes its file from the MCAP', async () => {
    const svg = join(dir, 'controller.svg');
    const c = await twolink(['compare', ctl, '--plot', svg], { timeoutMs: 60_000 });
    expect(c.code, whyExit(c)).toBe(0);
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg/);
    const html = join(dir, 'controller.html');
    const p = await twolink(['plot', ctl, '--out', html], { timeoutMs: 60_000 });
    expect(p.code, whyExit(p)).toBe(0);
    expect(p.stderr).toContain(`wrote the figure of ${ctl} to ${html}`);
    const csv = join(dir, 'controller.csv');
    const e = await twolink(['compare', ctl, '--export', 'csv', '--out', csv, '--json'], { timeoutMs: 60_000 });
    expect(e.code, whyExit(e)).toBe(0);
    const ticks = lastJson(e).runs[0].ticks;
    // One CSV row per tick, after the header row.
    expect(readFileSync(csv, 'utf8').trim().split('\n')).toHaveLength(ticks + 1);
    expect(statSync(csv).size).toBeGreaterThan(0);
  });
});
