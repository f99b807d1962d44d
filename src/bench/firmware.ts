/**
 * `npm run bench` section `firmware`: our firmware in the loop (simavr) next to the TS mock board on
 * the same rig file and trajectory, in board time (host lock-step against the mock's virtual time) and
 * in real time, with the difference taken apart (src/bench/firmware-tracking.ts); the fault cases
 * through the real firmware, timed; the stock Firmata image with our watchdog, when its ELF is given
 * (src/bench/firmware-stock.ts); how fast the simulator runs; flash and RAM of both boards.
 */
import { childDone, childEnd, childEndText, lastSummary, trackingRmsDeg, type ChildEnd } from './child-summary.js';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadRig, type Rig } from '../config/load.js';
import { FIRMWARE_DIR, FirmwareSim } from '../mock/firmware-sim.js';
import { field, FrameHost } from '../mock/frame-host.js';
import { stockFirmataRows } from './firmware-stock.js';
import { boardTimeComparison, realTimeComparison, type RealTimeSide } from './firmware-tracking.js';
import { parseMockReport, type MockReport } from '../mock/mock-report.js';
import { printSection, section, type BenchResult } from './report.js';
import { asPair, type ReadonlyPair } from '../model/types.js';

const ROOT = join(FIRMWARE_DIR, '..', '..');
const BIN = join(ROOT, 'bin', 'twolink.js');
const RIG_FILE = 'rigs/mock-arm.json';

interface ReachFigures {
  end: ChildEnd;
  rmsDeg: ReadonlyPair;
  lateSamples: number;
  /** How far the firmware rig fell behind the wall clock, in words from its `firmware-end` report. */
  rigSays: string;
  /** The firmware rig's encoder pins vs the plant (its `firmware-end` report). */
  pins: { rmsDeg: ReadonlyPair; stale: number } | undefined;
}

/** `twolink rig [--firmware] --pty --rt --report` + `twolink run --port ... --traj reach --json --rt`, once. */
async function cliReach(firmware: boolean): Promise<ReachFigures> {
  const rig = spawn(process.execPath, [BIN, 'rig', '--rig', RIG_FILE, ...(firmware ? ['--firmware'] : []), '--pty', '--rt', '--report'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  rig.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => rig.on('exit', () => r()));
  // The rig's figures come as report lines (src/mock/mock-report.ts), never from its words on stderr.
  let totals: Extract<MockReport, { kind: 'firmware-end' }> | undefined;
  const path = await new Promise<string>((resolve, reject) => {
    createInterface({ input: rig.stdout }).on('line', (line) => {
      const r = parseMockReport(line);
      if (r.kind === 'pty') resolve(r.host);
      else if (r.kind === 'firmware-end') totals = r;
    });
    rig.on('exit', (code) => reject(new Error(`twolink rig exited (${code}): ${err}`)));
  });
  const run = spawnSync(process.execPath, [BIN, 'run', '--rig', RIG_FILE, '--port', path, '--traj', 'reach', '--json', '--rt'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  rig.kill('SIGINT');
  await exited;
  const got = lastSummary(run.stdout ?? '', run.stderr ?? '');
  const s = 'summary' in got ? got.summary : undefined;
  return {
    end: s ? { kind: 'stopped', stop: s.stop } : { kind: 'no-summary', why: 'why' in got ? got.why : '' },
    rmsDeg: trackingRmsDeg(s),
    lateSamples: s?.timing?.lateSamples ?? NaN,
    rigSays: totals
      ? `${totals.boardS.toFixed(3)} s of board time in ${totals.wallS.toFixed(3)} s; behind the wall clock at most ${totals.maxBehindMs.toFixed(1)} ms${totals.restarts ? `, ${totals.restarts} times over 100 ms (skipped)` : ''}`
      : '',
    pins: totals
      ? { rmsDeg: asPair(totals.pins.rmsDeg, "the firmware rig's pins vs plant RMS"), stale: totals.pins.staleSlices }
      : undefined,
  };
}

/** The host goes silent after driving the arm: time from its last line to zero duty at the pins [s]. */
async function watchdogTimes(rig: Rig, n: number): Promise<number[]> {
  const sim = await FirmwareSim.start({ rig, board: 'uno' });
  const host = await FrameHost.open(sim.ptyPath);
  const out: number[] = [];
  try {
    await host.handshake();
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
  for (const m of `${r.stdout}${r.stderr}`.matchAll(
    /SIZE (\w+) \(\w+\): flash (\d+) of (\d+) bytes \(([\d.]+)%\), RAM (\d+) of (\d+) bytes/g,
  )) {
    out[m[1]!] = `flash ${m[2]} of ${m[3]} B (${m[4]}%), static RAM ${m[5]} of ${m[6]} B`;
  }
  return out;
}

/**
 * A bad CRC line through the real firmware while it drives: its `E` (real time from the write to the
 * E line [ms]) and whether the pins kept the last good command for 20 ms of board time after it.
 */
async function badCrc(rig: Rig): Promise<{ eMs: number; eLine: string; unchanged: boolean; slicesAfter: number }> {
  const sim = await FirmwareSim.start({ rig, board: 'uno' });
  const host = await FrameHost.open(sim.ptyPath);
  const duties: [number, number][] = [];
  sim.on('slice', (x) => duties.push(x.duty));
  try {
    await host.handshake();
    host.send('W', 1000);
    host.send('N', 1);
    const good = host.send('M', 200, 100);
    await host.next((l) => l.startsWith('T ') && field(l, 2) === String(good));
    await untilSlices(sim, () => duties.length > 8 && duties.slice(-8).every((d) => d[0] === 0.2 && d[1] === 0.1));
    const mark = duties.length;
    host.skip();
    const t0 = performance.now();
    host.raw('M 999 900 900*0000\n');
    const eLine = await host.next((l) => l.startsWith('E '));
    const eMs = performance.now() - t0;
    await untilSlices(sim, () => duties.length > mark + 80);
    const after = duties.slice(mark);
    host.send('S');
    return { eMs, eLine, unchanged: after.every((d) => d[0] === 0.2 && d[1] === 0.1), slicesAfter: after.length };
  } finally {
    await host.close();
    await sim.stop();
  }
}

/** Resolves once `cond` holds after a slice (or the harness ended). */
function untilSlices(sim: FirmwareSim, cond: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (!cond()) return;
      sim.off('slice', check);
      resolve();
    };
    sim.on('slice', check);
    sim.once('exit', () => resolve());
  });
}

/**
 * A reset of the AVR 0.5 s (board time) into a reach driven by `twolink run --port`: the host's stop
 * reason, and the real time from the reset to the host process's exit [ms].
 */
async function resetMidRun(rig: Rig): Promise<{ end: ChildEnd; exitMs: number; code: number | null }> {
  const sim = await FirmwareSim.start({ rig, board: 'uno' });
  let resetWall: number | undefined;
  sim.resetAfterDriving(0.5, () => (resetWall = performance.now()));
  const run = spawn(process.execPath, [BIN, 'run', '--rig', RIG_FILE, '--port', sim.ptyPath, '--traj', 'reach', '--json', '--rt'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  run.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((r) => run.on('exit', (c) => r(c)));
  const exitMs = resetWall === undefined ? NaN : performance.now() - resetWall;
  await sim.stop();
  return { end: childEnd(out), exitMs, code };
}

/**
 * The rig file for the lock-step runs: the host's lost-link timer is wall time, and the harness waits up
 * to 1 s for an answer the host may never send (a T before its loop starts): a 1 s watchdog and 5 s of
 * samples before the link counts as lost.
 */
function lockstepRig(): Rig {
  const file = join(mkdtempSync(join(tmpdir(), 'twolink-bench-fw-')), 'mock-arm-lockstep.json');
  const spec = JSON.parse(readFileSync(join(ROOT, RIG_FILE), 'utf8')) as { link: { watchdogMs?: number; lostAfterTicks?: number } };
  spec.link.watchdogMs = 1000;
  spec.link.lostAfterTicks = 2500;
  writeFileSync(file, JSON.stringify(spec));
  return loadRig(file);
}

/** The reach in real time, `runs` times on each side: rows and the sides for the comparison. */
async function realTimeReaches(
  runs: number,
  figures: BenchResult['figures'],
): Promise<{ rows: [string, string, string][]; mock: RealTimeSide; fw: RealTimeSide }> {
  const rows: [string, string, string][] = [];
  const sides: RealTimeSide[] = [];
  for (const [name, fw] of [
    ['TS mock board on a pty', false],
    ['our firmware in simavr', true],
  ] as const) {
    const rs: ReachFigures[] = [];
    for (let i = 0; i < runs; i++) rs.push(await cliReach(fw));
    const done = rs.filter((r) => childDone(r.end));
    figures[`${fw ? 'firmware' : 'mock'}ReachRmsDeg`] = done.map((r) => r.rmsDeg).flat();
    rows.push([
      `real time, ${name}: done / runs`,
      `${done.length} / ${runs}`,
      rs
        .filter((r) => !childDone(r.end))
        .map((r) => childEndText(r.end))
        .join('; ') || '',
    ]);
    rows.push([
      `real time, ${name}: tracking RMS j1 / j2 per run`,
      '',
      `${done.map((r) => r.rmsDeg.map((x) => x.toFixed(3)).join(' / ')).join(', ')} deg; late samples ${rs.map((r) => r.lateSamples).join(', ')}`,
    ]);
    if (fw) rows.push(['  the simulator on the wall clock', '', rs.map((r) => r.rigSays).join(' | ')]);
    sides.push({
      rmsDeg: done.map((r) => r.rmsDeg),
      pinsDeg: done.flatMap((r) => (r.pins ? [r.pins.rmsDeg] : [])),
      staleSlices: done.map((r) => r.pins?.stale ?? NaN),
    });
  }
  const [mock, fw] = asPair(sides, 'the real-time sides (mock, firmware)');
  return { rows, mock, fw };
}

/** The fault cases through the real firmware, timed. */
async function faultRows(rig: Rig, figures: BenchResult['figures']): Promise<[string, string, string][]> {
  const wd = await watchdogTimes(rig, 3);
  figures.watchdogMs = wd.map((x) => x * 1e3);
  const crc = await badCrc(rig);
  figures.badCrcEMs = crc.eMs;
  const reset = await resetMidRun(rig);
  figures.resetToHostExitMs = reset.exitMs;
  return [
    [
      'host silent: last host line to zero duty at the pins',
      `${wd.map((x) => (x * 1e3).toFixed(2)).join(', ')} ms`,
      'board time (simulated cycles), firmware watchdog 100 ms',
    ],
    [
      'bad CRC line: the firmware answers',
      `${crc.eMs.toFixed(1)} ms`,
      `real time, write to \`${crc.eLine.trim()}\`; pins ${crc.unchanged ? 'unchanged' : 'CHANGED'} over ${crc.slicesAfter} slices (${(crc.slicesAfter / 4).toFixed(0)} ms of board time) after it`,
    ],
    [
      'reset mid-run: the host stops',
      `${reset.exitMs.toFixed(0)} ms`,
      `real time, reset to \`twolink run\` exiting (code ${reset.code}) with ${childEndText(reset.end)}`,
    ],
  ];
}

/** The section as a table (for src/bench/main.ts). */
export async function firmwareSection(runs = 3): Promise<BenchResult> {
  const rig = loadRig(join(ROOT, RIG_FILE));
  const figures: BenchResult['figures'] = {};
  const board = await boardTimeComparison(lockstepRig(), BIN, ROOT);
  Object.assign(figures, board.figures);
  const rt = await realTimeReaches(runs, figures);
  const cmp = realTimeComparison(rig, rt.mock, rt.fw, board.pinsDeg);
  figures.realTimePass = cmp.pass ? 1 : 0;
  const rows: [string, string, string][] = [
    ['-- the reach in board time (virtual time, wall-clock effects out) --', '', ''],
    ...board.rows,
  ];
  rows.push(['-- the reach in real time (--rt) --', '', ''], ...rt.rows, ...cmp.rows);
  rows.push(['-- faults through the real firmware --', '', ''], ...(await faultRows(rig, figures)));
  rows.push(['-- stock ConfigurableFirmata 2.10 + FirmataWatchdog in simavr --', '', ''], ...(await stockFirmataRows(BIN, ROOT)));
  const speed = await simulatorSpeed(rig);
  figures.simulatorSpeed = speed;
  rows.push(['simavr speed, firmware idle, no pacing', `${speed.toFixed(1)}x real time`, 'the AVR sleeps between interrupts']);
  for (const [b, text] of Object.entries(sizes())) rows.push([`size ${b}`, '', text]);
  return section('firmware in the loop (simavr 1.6, the mock-arm plant)', rows, figures);
}

/** Prints the section. */
export async function benchFirmware(): Promise<void> {
  printSection(await firmwareSection());
}
