/**
 * `npm run bench` section `firmware`: our firmware in the loop (simavr) next to the TS mock board, in
 * real time, on the same rig file and trajectory; the watchdog's time at the pins through the real
 * firmware (board time); how fast the simulator runs; flash and RAM of both boards.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadRig, type Rig } from '../config/load.js';
import { FIRMWARE_DIR, FirmwareSim } from '../rig/firmware-sim.js';
import { field, FrameHost } from '../rig/frame-host.js';
import { printSection, section, type BenchResult } from './report.js';

const ROOT = join(FIRMWARE_DIR, '..', '..');
const BIN = join(ROOT, 'bin', 'twolink.js');
const RIG_FILE = 'rigs/mock-arm.json';

interface ReachFigures {
  stopReason: string;
  rmsDeg: number[];
  lateSamples: number;
  /** The rig's last stderr line (the firmware rig: how far it fell behind the wall clock). */
  rigSays: string;
}

/** `twolink rig [--firmware] --pty --rt` + `twolink run --port ... --traj reach --json --rt`, once. */
async function cliReach(firmware: boolean): Promise<ReachFigures> {
  const rig = spawn(process.execPath, [BIN, 'rig', '--rig', RIG_FILE, ...(firmware ? ['--firmware'] : []), '--pty', '--rt'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  rig.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => rig.on('exit', () => r()));
  const path = await new Promise<string>((resolve, reject) => {
    let out = '';
    rig.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
    });
    rig.on('exit', (code) => reject(new Error(`twolink rig exited (${code}): ${err}`)));
  });
  const run = spawnSync(process.execPath, [BIN, 'run', '--rig', RIG_FILE, '--port', path, '--traj', 'reach', '--json', '--rt'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  rig.kill('SIGINT');
  await exited;
  const lines = (run.stdout ?? '').trim().split('\n');
  let s: { stopReason?: string; tracking?: { rmsDeg?: number[] }; timing?: { lateSamples?: number } } = {};
  try {
    s = JSON.parse(lines[lines.length - 1] ?? '{}');
  } catch {
    s = { stopReason: `no summary: ${(run.stderr ?? '').trim().split('\n').pop()}` };
  }
  return {
    stopReason: s.stopReason ?? 'none',
    rmsDeg: s.tracking?.rmsDeg ?? [NaN, NaN],
    lateSamples: s.timing?.lateSamples ?? NaN,
    rigSays: err.trim().split('\n').pop() ?? '',
  };
}

/** The host goes silent after driving the arm: time from its last line to zero duty at the pins [s]. */
async function watchdogTimes(rig: Rig, n: number): Promise<number[]> {
  const sim = await FirmwareSim.start({ rig, board: 'uno' });
  const host = await FrameHost.open(sim.ptyPath);
  const out: number[] = [];
  try {
    await host.next((l) => l.startsWith('I '));
    host.skip();
    host.send('H', 1);
    await host.next((l) => l.startsWith('I ') && field(l, 2) === '0');
    host.send('R', 500);
    for (let k = 0; k < n; k++) {
      host.send('W', 1000);
      host.send('N', 1);
      let last = 0;
      for (let i = 0; i < 10; i++) {
        await host.next((l) => l.startsWith('T '));
        last = host.send('M', 400, -200);
      }
      await host.next((l) => l.startsWith('T ') && field(l, 2) === String(last));
      const off = new Promise<{ sinceLineS: number }>((r) => sim.once('outputs-off', r));
      host.send('W', 100);
      out.push((await off).sinceLineS);
      host.skip();
    }
  } finally {
    await host.close();
    await sim.stop();
  }
  return out;
}

/** Board seconds simulated per wall second with the firmware idle and no pacing. */
async function simulatorSpeed(rig: Rig): Promise<number> {
  const sim = await FirmwareSim.start({ rig, board: 'uno', realtime: false });
  await new Promise((r) => setTimeout(r, 2000));
  const s = await sim.stop();
  return s.boardS / s.wallS;
}

/** Flash and RAM of both boards, as `make` reports them. */
function sizes(): Record<string, string> {
  const r = spawnSync('make', ['--no-print-directory', '-C', FIRMWARE_DIR, 'uno', 'mega'], { encoding: 'utf8' });
  const out: Record<string, string> = {};
  for (const m of `${r.stdout}${r.stderr}`.matchAll(/SIZE (\w+) \(\w+\): flash (\d+) of (\d+) bytes \(([\d.]+)%\), RAM (\d+) of (\d+) bytes/g)) {
    out[m[1]!] = `flash ${m[2]} of ${m[3]} B (${m[4]}%), static RAM ${m[5]} of ${m[6]} B`;
  }
  return out;
}

const median = (xs: number[]): number => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

/** The section as a table (for src/bench/main.ts). */
export async function firmwareSection(runs = 3): Promise<BenchResult> {
  const rig = loadRig(join(ROOT, RIG_FILE));
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};
  for (const [name, fw] of [['TS mock board on a pty', false], ['our firmware in simavr', true]] as const) {
    const rs: ReachFigures[] = [];
    for (let i = 0; i < runs; i++) rs.push(await cliReach(fw));
    const done = rs.filter((r) => r.stopReason === 'done');
    const rms = [0, 1].map((j) => median(done.map((r) => r.rmsDeg[j]!)));
    const key = fw ? 'firmware' : 'mock';
    figures[`${key}ReachRmsDeg`] = rms;
    figures[`${key}ReachDone`] = done.length;
    rows.push([`reach, ${name}: done / runs`, `${done.length} / ${runs}`, rs.filter((r) => r.stopReason !== 'done').map((r) => r.stopReason).join('; ') || 'real time']);
    rows.push([`reach, ${name}: tracking RMS j1 / j2 (median)`, `${rms.map((x) => x.toFixed(3)).join(' / ')} deg`, `late samples ${rs.map((r) => r.lateSamples).join(', ')}`]);
    if (fw) rows.push(['  the simulator on the wall clock', '', rs.map((r) => r.rigSays.replace(/^twolink rig: /, '')).join(' | ')]);
  }
  const wd = await watchdogTimes(rig, 3);
  figures.watchdogMs = wd.map((x) => x * 1e3);
  rows.push(['watchdog: last host line to zero duty at the pins', `${wd.map((x) => (x * 1e3).toFixed(2)).join(', ')} ms`, 'board time (simulated cycles), timeout 100 ms']);
  const speed = await simulatorSpeed(rig);
  figures.simulatorSpeed = speed;
  rows.push(['simavr speed, firmware idle, no pacing', `${speed.toFixed(1)}x real time`, 'the AVR sleeps between interrupts']);
  for (const [board, text] of Object.entries(sizes())) rows.push([`size ${board}`, '', text]);
  return section('firmware in the loop (real time, --rt; simavr 1.6, the mock-arm plant)', rows, figures);
}

/** Prints the section. */
export async function benchFirmware(): Promise<void> {
  printSection(await firmwareSection());
}
