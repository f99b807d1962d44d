/**
 * `npm run bench -- --only firmware`, the stock Firmata part: the image that
 * firmware-protocol/firmata-watchdog/build-stock.sh builds (the stock ConfigurableFirmata 2.10.x example
 * with docs/firmata.md's edits, FirmataEncoder, PJRC Encoder and our FirmataWatchdog) runs in simavr
 * (fil_harness's `uno-firmata` pin map, the wiring docs/firmata.md suggests for an Uno) against
 * `twolink run --port` through johnny-five. It needs the sources, which CI does not have: with no
 * TWOLINK_STOCK_FIRMATA_ELF the rows say so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRig, type Rig } from '../config/load.js';
import { FirmwareSim } from '../rig/firmware-sim.js';
import { requestRealtime } from '../time/threads.js';

/** The Firmata example rig, on an Uno wired as docs/firmata.md section 2 suggests; `watchdogMs` as given. */
export function unoFirmataRig(root: string, watchdogMs?: number): Rig {
  const spec = JSON.parse(readFileSync(join(root, 'rigs/mock-arm-firmata.json'), 'utf8')) as {
    name: string;
    link: { watchdogMs?: number };
    firmata: { board: string; sensors: unknown[] };
  };
  if (watchdogMs !== undefined) spec.link.watchdogMs = watchdogMs;
  spec.name = 'mock-arm-firmata-uno';
  spec.firmata.board = 'uno';
  spec.firmata.sensors = [
    { type: 'encoder', pinA: 2, pinB: 8 },
    { type: 'encoder', pinA: 3, pinB: 12 },
  ];
  const file = join(mkdtempSync(join(tmpdir(), 'twolink-stock-')), 'mock-arm-firmata-uno.json');
  writeFileSync(file, JSON.stringify(spec));
  return loadRig(file);
}

export interface StockRun {
  stopReason: string;
  rmsDeg: number[];
  /** Board time from the host's last byte to zero duty at both motor pins, after the host was killed [s]. */
  watchdogS?: number;
}

/**
 * One reach through the stock image; with `killAfterS`, the host is killed with SIGKILL that long
 * (board time) after the motors first move, and the watchdog's cut is timed.
 */
export async function stockReach(rig: Rig, elf: string, bin: string, root: string, killAfterS?: number): Promise<StockRun> {
  const sim = await FirmwareSim.start({ rig, board: 'uno-firmata', elf });
  await requestRealtime(sim.pid, 45);
  try {
    return await reachOn(sim, rig, bin, root, killAfterS);
  } finally {
    await sim.stop();
  }
}

/**
 * Two reaches one after the other on the same simulated board, which is not reset between them (a pty
 * has no DTR): the second meets encoders FirmataEncoder still has attached (the re-attach case).
 */
export async function stockTwice(rig: Rig, elf: string, bin: string, root: string): Promise<StockRun[]> {
  const sim = await FirmwareSim.start({ rig, board: 'uno-firmata', elf });
  await requestRealtime(sim.pid, 45);
  try {
    const first = await reachOn(sim, rig, bin, root);
    return [first, await reachOn(sim, rig, bin, root)];
  } finally {
    await sim.stop();
  }
}

async function reachOn(sim: FirmwareSim, rig: Rig, bin: string, root: string, killAfterS?: number): Promise<StockRun> {
  const run: ChildProcess = spawn(process.execPath, [bin, 'run', '--rig', rig.file, '--port', sim.ptyPath, '--traj', 'reach', '--json', '--rt'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  run.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  let movingSince: number | undefined;
  let killedAt: number | undefined;
  let watchdogS: number | undefined;
  const onSlice = (s: { boardTime: number; duty: [number, number] }): void => {
    if (killAfterS === undefined || killedAt !== undefined) return;
    if (s.duty[0] !== 0 || s.duty[1] !== 0) movingSince ??= s.boardTime;
    if (movingSince !== undefined && s.boardTime - movingSince > killAfterS && (s.duty[0] !== 0 || s.duty[1] !== 0)) {
      killedAt = s.boardTime;
      run.kill('SIGKILL');
    }
  };
  sim.on('slice', onSlice);
  let onOff: ((e: { boardTime: number; sinceByteS: number }) => void) | undefined;
  const cut = new Promise<void>((resolve) => {
    onOff = (e): void => {
      if (killedAt !== undefined && watchdogS === undefined && e.boardTime > killedAt) {
        watchdogS = e.sinceByteS;
        resolve();
      }
    };
    sim.on('outputs-off', onOff);
    sim.once('exit', () => resolve());
  });
  await new Promise<void>((r) => run.on('exit', () => r()));
  if (killedAt !== undefined) await Promise.race([cut, new Promise((r) => setTimeout(r, 2000))]);
  sim.off('slice', onSlice);
  sim.off('outputs-off', onOff!);
  if (killedAt !== undefined) return { stopReason: 'killed', rmsDeg: [NaN, NaN], ...(watchdogS !== undefined ? { watchdogS } : {}) };
  try {
    const s = JSON.parse(out.trim().split('\n').pop() ?? '') as { stopReason?: string; tracking?: { rmsDeg?: number[] } };
    return { stopReason: s.stopReason ?? 'none', rmsDeg: s.tracking?.rmsDeg ?? [NaN, NaN] };
  } catch {
    return { stopReason: 'no summary', rmsDeg: [NaN, NaN] };
  }
}

/** The rows: reaches and watchdog cuts through the stock image, or why they were skipped. */
export async function stockFirmataRows(bin: string, root: string, runs = 3): Promise<[string, string, string][]> {
  const elf = process.env.TWOLINK_STOCK_FIRMATA_ELF;
  if (!elf || !existsSync(elf)) {
    return [['stock ConfigurableFirmata in simavr', 'skipped', `build it with firmware-protocol/firmata-watchdog/build-stock.sh and set TWOLINK_STOCK_FIRMATA_ELF to its ELF${elf ? ` (no file ${elf})` : ''}`]];
  }
  const rig = unoFirmataRig(root);
  const reaches: StockRun[] = [];
  for (let i = 0; i < runs; i++) reaches.push(await stockReach(rig, elf, bin, root));
  const cuts: StockRun[] = [];
  for (let i = 0; i < runs; i++) cuts.push(await stockReach(rig, elf, bin, root, 1.0));
  // No cut: the run ended before the host could be killed (its stop reason says why), or the board did not cut.
  const twice = await stockTwice(rig, elf, bin, root);
  const ms = cuts.map((c) => (c.watchdogS !== undefined ? (c.watchdogS * 1e3).toFixed(2) : c.stopReason === 'killed' ? 'NO CUT' : `not killed (${c.stopReason})`));
  return [
    ['stock Firmata + FirmataWatchdog (Uno, 57600 baud, 333 Hz): reach done / runs', `${reaches.filter((r) => r.stopReason === 'done').length} / ${runs}`, reaches.map((r) => r.stopReason).join(', ')],
    ['  tracking RMS j1 / j2 per run', '', `${reaches.map((r) => r.rmsDeg.map((x) => x.toFixed(3)).join(' / ')).join(', ')} deg (real time, --rt)`],
    ['  two runs on one board, not reset between them (re-attach)', twice.map((r) => r.stopReason).join(', '), 'the second meets the encoders FirmataEncoder still has attached'],
    ['  host killed (SIGKILL) while driving: last host byte to zero duty', `${ms.join(', ')} ms`, `board time; FirmataWatchdog armed by the host with link.watchdogMs = ${rig.link.watchdogMs} ms`],
  ];
}
