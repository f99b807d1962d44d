// `twolink compare` and `twolink plot` as users call them, on real recordings of the mock rig: the
// numbers agree with the run's own summary, the files are written, and bad input exits with code 2
// and a message that names the argument or the line.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { lastJson, twolink, type CliResult } from '../helpers/cli.js';
import { tmp } from '../compare-synthetic.js';

const A = tmp('reach.ndjson');
const B = tmp('reach-pid.ndjson');
let summaryA: { ticks: number; tracking: { rmsDeg: number[]; samples: number }; twin: { rmsDeg: number[] } };

/** Runs a setup step; when it fails, the error says how, with the child's stderr and stdout. */
async function setupRun(args: string[]): Promise<CliResult> {
  const r = await twolink(args, { timeoutMs: 60_000 });
  if (r.code !== 0) {
    const how = r.signal ? `was killed by ${r.signal}${r.signal === 'SIGKILL' ? ' (the 60 s timeout)' : ''}` : `exited with code ${r.code}`;
    throw new Error(`setup step \`twolink ${args.join(' ')}\` ${how}\n--- its stderr:\n${r.stderr}--- its stdout:\n${r.stdout}`);
  }
  return r;
}

beforeAll(async () => {
  // One after the other: each is a real-time run of the loop.
  const ra = await setupRun(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--traj', 'reach', '--record', A, '--json']);
  await setupRun(['run', '--rig', 'rigs/mock-arm.json', '--mock', '--rt', '--traj', 'reach', '--record', B, '--json', '--no-feedforward']);
  summaryA = lastJson(ra);
}, hangGuardMs(90_000));

describe('twolink compare', () => {
  it("--json: the track phase's tracking error and the twin residual agree with the run's own summary", async () => {
    const r = await twolink(['compare', A, '--json']);
    expect(r.code).toBe(0);
    const o = lastJson(r);
    const md = o.comparisons.find((c: { id: string }) => c.id === 'measured-desired');
    const mt = o.comparisons.find((c: { id: string }) => c.id === 'measured-twin');
    for (let j = 0; j < 2; j++) {
      expect(md.joints[j].byPhase.track.samples).toBe(summaryA.tracking.samples);
      expect(md.joints[j].byPhase.track.rmsDeg).toBeCloseTo(summaryA.tracking.rmsDeg[j]!, 9);
      expect(mt.joints[j].rmsDeg).toBeCloseTo(summaryA.twin.rmsDeg[j]!, 9);
      expect(['approach', 'track', 'park', 'hold']).toContain(md.joints[j].max.phase);
    }
    expect(o.runs[0].ticks).toBe(summaryA.ticks);
    expect(o.runs[0].complete).toBe(true);
  });

  it('two runs: a table per joint with run vs run, the figure and a CSV', async () => {
    const svg = tmp('cmp.svg');
    const csv = tmp('a.csv');
    const r = await twolink(['compare', A, B, '--plot', svg, '--export', 'csv', '--out', csv]);
    expect(r.code).toBe(0);
    for (const j of [1, 2]) expect(r.stdout).toMatch(new RegExp(`joint ${j} +samples +RMS +mean +max +at t \\[s\\] +phase`));
    expect(r.stdout).toMatch(/B - A measured +\d+ +\d/);
    expect(r.stdout).toMatch(/Run vs run: .*trajectory proper/);
    expect(r.stdout).toMatch(/reach: \d+ points; trajectory time from the plan for \d+\/\d+ readings of A/);
    expect(r.stderr).toMatch(/wrote the figure to/);
    const text = readFileSync(svg, 'utf8');
    expect(text).toMatch(/^<svg/);
    expect(text).toContain('Joint 2 jerk [deg/s³]');
    expect(text).toContain('s: measured B');
    const lines = readFileSync(csv, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(summaryA.ticks + 1);
  });

  it('--export mcap writes every tick', async () => {
    const out = tmp('a.mcap');
    const r = await twolink(['compare', A, '--export', 'mcap', '--out', out, '--json']);
    expect(r.code).toBe(0);
    expect(lastJson(r).wrote.export).toBe(out);
    const { McapIndexedReader } = await import('@mcap/core');
    const bytes = readFileSync(out);
    const reader = await McapIndexedReader.Initialize({
      readable: { size: async () => BigInt(bytes.length), read: async (o, s) => bytes.subarray(Number(o), Number(o + s)) },
    });
    const tick = [...reader.channelsById.values()].find((c) => c.topic === '/twolink/tick')!;
    expect(reader.statistics!.channelMessageCounts.get(tick.id)).toBe(BigInt(summaryA.ticks));
  });

  it('a recording cut short by a crash is compared, and the report says so; a bad line is refused with its number', async () => {
    const text = readFileSync(A, 'utf8').trim().split('\n');
    const cut = tmp('cut.ndjson');
    writeFileSync(cut, `${text.slice(0, 900).join('\n')}\n${text[900]!.slice(0, 50)}`);
    const r = await twolink(['compare', cut]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/note: A: the last line \(line 901, 50 bytes\) was cut short/);
    const bad = tmp('bad.ndjson');
    writeFileSync(bad, `${[...text.slice(0, 500), '{"kind":"tick","t":', ...text.slice(500)].join('\n')}\n`);
    const rb = await twolink(['compare', bad]);
    expect(rb.code).toBe(2);
    expect(rb.stderr.trim()).toMatch(new RegExp(`^twolink: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:501: not JSON`));
  });

  it('bad arguments: exit code 2 and a message naming the argument', async () => {
    const cases: [string[], RegExp][] = [
      [['compare'], /give one or two recordings/],
      [['compare', A, B, A], /give one or two recordings/],
      [['compare', A, '--plot', 'x.png'], /--plot: "x.png" must end in .svg/],
      [['compare', A, '--export', 'xml', '--out', 'x'], /--export: "xml" is not one of csv, mcap/],
      [['compare', A, '--export', 'csv'], /--out is required/],
      [['compare', A, '--out', 'x.csv'], /--out goes with --export/],
      [['compare', A, '--smooth', '0'], /--smooth: 0 s is out of range/],
      [['compare', A, '--plot', 'x.svg', '--from', '3', '--to', '1'], /--to \(1 s\) must be later than --from \(3 s\)/],
      [['compare', 'nope.ndjson'], /nope.ndjson: no such file/],
      [['plot', 'traj', '--rig', 'rigs/mock-arm.json', '--traj', 'zigzag', '--out', 'x.svg'], /unknown trajectory "zigzag"/],
      [['plot', 'traj', '--rig', 'rigs/mock-arm.json', '--traj', 'reach'], /--out is required/],
      [['plot', 'bar'], /plot: "bar" is neither/],
    ];
    for (const [args, re] of cases) {
      const r = await twolink(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr, args.join(' ')).toMatch(re);
    }
  });
});

describe('twolink plot', () => {
  it('traj writes the seed 002 figure of a trajectory; a run plot writes an HTML page', async () => {
    const svg = tmp('reach-traj.svg');
    const r = await twolink(['plot', 'traj', '--rig', 'rigs/mock-arm.json', '--traj', 'reach', '--out', svg]);
    expect(r.code).toBe(0);
    const text = readFileSync(svg, 'utf8');
    expect(text).toContain('Endpoint linear jerk [m/s³]');
    expect(text).toContain('Joint space');
    const html = tmp('run.html');
    const rh = await twolink(['plot', A, '--out', html, '--from', '1', '--to', '3']);
    expect(rh.code).toBe(0);
    expect(existsSync(html)).toBe(true);
    expect(readFileSync(html, 'utf8')).toContain('Twin residual');
  });
});
