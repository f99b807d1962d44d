/**
 * Firmware in the loop: our compiled firmware (firmware-protocol/firmware) runs in simavr inside a C
 * harness (firmware-protocol/firmware/sim/fil_harness.c, built with gcc against libsimavr on first
 * use), its UART0 on a pseudo-terminal, and the mock rig's Plant closes the loop from here.
 *
 * The exchange is lock-step in board time, in slices (250 us by default): at the end of slice k the
 * harness reports the mean duty of each motor over it (from OCR1A/OCR1B, ICR1, the COM bits and the
 * direction pins); this side steps the Plant over the slice with that duty and answers with the
 * plant's encoder counts; the harness turns them into quadrature edges on the encoder pins during the
 * next slice. So that the pins show the plant's angle at each instant rather than one slice late, the
 * answer is the counts predicted for the end of the next slice (angle + velocity x slice; the duty
 * changes the velocity by < 0.01 counts within a slice); `predict: false` answers the counts now, the
 * harness's original one-slice lag, for measuring it. The harness may run up to `lead` slices ahead
 * of the answers (default 40, 10 ms) when this side is slow (a garbage-collector pause on a busy
 * machine), instead of the board stopping; the pins then go on at the plant's last velocity (sent with
 * the counts) rather than freeze, for at most `lead` slices. Every slice reports what the pins show: `encoderStats()` compares it with the
 * plant. The harness paces itself on the wall clock, or (`hostLockstep`) waits for the host instead.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { MockPart } from '../config/parts.js';
import { Plant } from './plant.js';
import { spawnTied } from './tied.js';

/** The firmware folder of this checkout (firmware-protocol/firmware). */
export const FIRMWARE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'firmware-protocol', 'firmware');

export type FirmwareBoard = 'uno' | 'mega';
/**
 * A pin map of the harness: our firmware's boards, or `uno-firmata`, stock ConfigurableFirmata on an
 * Uno wired as docs/firmata.md suggests (motors PWM 5 / DIR 4, PWM 6 / DIR 7; encoders 2 / 8, 3 / 12).
 */
export type HarnessBoard = FirmwareBoard | 'uno-firmata';

/** What is missing to build or run the firmware in the loop; the message says what to install. */
export class FirmwareSimError extends Error {
  override readonly name = 'FirmwareSimError';
}

const INSTALL = 'sudo apt-get install gcc-avr avr-libc arduino-core-avr simavr libsimavr-dev make gcc';

/** The ELF of `board` built for the rig's encoder counts, and the harness; built with make when missing. */
export function buildFirmwareSim(board: FirmwareBoard, countsPerRev: readonly number[]): { elf: string; harness: string } {
  if (!existsSync('/usr/include/simavr/sim_avr.h'))
    throw new FirmwareSimError(`simavr is not installed (no /usr/include/simavr): ${INSTALL}`);
  const cpr = [countsPerRev[0] ?? 2048, countsPerRev[1] ?? 2048].map((c) => Math.round(c));
  for (const c of cpr) {
    if (!(c >= 1 && c <= 99_999_999)) throw new FirmwareSimError(`encoder counts per revolution ${c}: the firmware takes 1..99999999`);
  }
  const buildDir = `build/fil-${cpr[0]}-${cpr[1]}`;
  const r = spawnSync(
    'make',
    ['--no-print-directory', '-C', FIRMWARE_DIR, board, 'fil-harness', `BUILD=${buildDir}`, `CPR1=${cpr[0]}`, `CPR2=${cpr[1]}`],
    {
      encoding: 'utf8',
    },
  );
  if (r.error) throw new FirmwareSimError(`cannot run make (${r.error.message}): ${INSTALL}`);
  if (r.status !== 0) {
    const out = `${r.stdout}${r.stderr}`.trim().split('\n').slice(-6).join('\n');
    throw new FirmwareSimError(`building the firmware for the simulator failed (${INSTALL}):\n${out}`);
  }
  return { elf: join(FIRMWARE_DIR, buildDir, board, 'twolink_fw.elf'), harness: join(FIRMWARE_DIR, buildDir, 'host', 'fil_harness') };
}

/** The harness alone (for a foreign image, `FirmwareSimOptions.elf`). */
export function buildHarness(): string {
  if (!existsSync('/usr/include/simavr/sim_avr.h'))
    throw new FirmwareSimError(`simavr is not installed (no /usr/include/simavr): ${INSTALL}`);
  const r = spawnSync('make', ['--no-print-directory', '-C', FIRMWARE_DIR, 'fil-harness', 'BUILD=build/fil-host'], { encoding: 'utf8' });
  if (r.error || r.status !== 0)
    throw new FirmwareSimError(
      `building the simulator harness failed (${INSTALL}):\n${r.error?.message ?? `${r.stdout}${r.stderr}`.trim()}`,
    );
  return join(FIRMWARE_DIR, 'build', 'fil-host', 'host', 'fil_harness');
}

export interface FirmwareSimOptions {
  rig: MockPart;
  /** The pin map; `uno-firmata` needs `elf`. @default 'uno' */
  board?: HarnessBoard;
  /** A firmware image built elsewhere (e.g. firmware-protocol/firmata-watchdog/build-stock.sh); default: ours, built for the rig. */
  elf?: string;
  /** Board time per lock-step slice [us], 20..10000. @default 250 */
  sliceUs?: number;
  /**
   * Slices the harness may run ahead of the plant's answers, 0..400: slack for a busy machine. While
   * it does, the pins go on at the plant's last velocity (`encoderStats()` counts those slices and
   * what the pins lost). @default 40
   */
  lead?: number;
  /** Throttle to the wall clock. @default true */
  realtime?: boolean;
  /** Answer with the counts predicted one slice ahead (see the file's comment). @default true */
  predict?: boolean;
  /**
   * Not real time: each slice waits until the host has answered the firmware's last T frame, so a run
   * is the same in board time however busy the machine is (figures from it are virtual-time figures).
   * @default false
   */
  hostLockstep?: boolean;
  /**
   * With `hostLockstep`: how long a slice waits for the host's answer before it goes on without it [ms]
   * (a host held up longer by a busy machine would otherwise leave lock-step).
   * @default 1000
   */
  hostWaitMs?: number;
}

/**
 * The encoder pins against the plant, at the end of every slice: what the firmware could count then,
 * next to the plant's angle then (noise-free) [counts].
 */
export interface EncoderPinStats {
  slices: number;
  /** RMS of (plant angle - pins) per joint, every slice [counts]. */
  rmsCounts: number[];
  /** The same over the slices that ran ahead of the plant process (pins following old counts) [counts]. */
  staleRmsCounts: number[];
  /** Slices that ran ahead of the plant process, and the most slices it was behind. */
  staleSlices: number;
  maxStale: number;
}

/** Events of a running simulation (board times are simulated time since the harness started [s]). */
export interface FirmwareSimEvents {
  /**
   * Both motor outputs went to zero, `sinceLineS` after the last line from the host reached the AVR,
   * `sinceByteS` after its last byte (for Firmata, which has no line ends) [s of board time].
   */
  'outputs-off': [{ boardTime: number; sinceLineS: number; sinceByteS: number }];
  /** The AVR was reset (its micros() restarts; the plant goes on). */
  reset: [{ boardTime: number }];
  /** The simulation fell behind the wall clock, from `boardTime` by up to `behindS` (said once it caught up: the episode's peak). */
  behind: [{ boardTime: number; behindS: number }];
  /**
   * A host opened (`open`) or closed the pty. While none has it open the board's output is discarded,
   * as a closed serial port discards it; `discardedBytes` (on open): how much that was.
   */
  host: [{ open: boolean; boardTime: number; discardedBytes: number }];
  /** The host's first handshake request (an H frame; on uno-firmata, REPORT_VERSION or REPORT_FIRMWARE) reached the AVR's UART: once. */
  handshake: [{ boardTime: number }];
  /** A slice was simulated and answered. */
  /** A slice simulated: its board time [s], the mean duty at the motor pins, the counts the encoder pins showed, and how many slices the plant's answer was late (0: on time). */
  slice: [{ index: number; boardTime: number; duty: [number, number]; pins: [number, number]; stale: number }];
  /** The harness exited. */
  exit: [FirmwareSimSummary];
  /** Text the harness wrote on stderr. */
  log: [string];
}

export interface FirmwareSimSummary {
  /** Board time simulated [s] and the wall time it took [s]. */
  boardS: number;
  wallS: number;
  /** Largest lag behind the wall clock [ms], and how often the harness skipped ahead after > 100 ms. */
  maxBehindMs: number;
  restarts: number;
  /** UART bytes dropped because the host did not read. */
  droppedBytes: number;
  /** Exit code of the harness (null: killed). */
  code: number | null;
}

/** The first line of the harness (zod: the one message that is not on the hot path). */
const PtyLine = z.tuple([z.literal('P'), z.string().regex(/^\/dev\/\S+$/)]);

/** A running firmware-in-the-loop simulation. */
export class FirmwareSim extends EventEmitter<FirmwareSimEvents> {
  /** The host end of the pseudo-terminal: `twolink run --port` opens it. */
  ptyPath = '';
  readonly plant: Plant;
  /** Slices simulated so far. */
  slices = 0;
  private readonly child: ChildProcess;
  private readonly counts: number[] = [0, 0];
  private readonly duty: number[] = [0, 0];
  private readonly predictS: number;
  private readonly sliceS: number;
  private readonly sensor: { sign: number; zero: number; cpr: number }[];
  private readonly pinSq = [0, 0];
  private readonly staleSq = [0, 0];
  private pinSlices = 0;
  private staleSlices = 0;
  private maxStale = 0;
  private summary: FirmwareSimSummary | undefined;
  private readonly exited: Promise<FirmwareSimSummary>;

  private constructor(opts: FirmwareSimOptions, files: { elf: string; harness: string }) {
    super();
    const rig = opts.rig;
    if (!rig.plant)
      throw new FirmwareSimError(`${rig.file} has no "plant" section: the firmware in the loop needs the true arm to simulate`);
    this.plant = new Plant(rig.plant, rig.encoders, 0);
    this.sensor = rig.encoders.map((e) => ({ sign: e.sign, zero: e.zero, cpr: e.countsPerRev }));
    this.sliceS = (opts.sliceUs ?? 250) / 1e6;
    this.predictS = opts.predict === false ? 0 : this.sliceS;
    const args = [opts.board ?? 'uno', files.elf, '--slice-us', String(opts.sliceUs ?? 250), '--lead', String(opts.lead ?? 40)];
    if (opts.realtime === false || opts.hostLockstep) args.push('--no-realtime');
    if (opts.hostLockstep) args.push('--host-lockstep', '--host-wait-ms', String(opts.hostWaitMs ?? 1000));
    this.child = spawnTied(files.harness, args, { stdio: ['pipe', 'pipe', 'pipe'] }); // ends with this process (tied.ts)
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code) => {
        const s = this.summary ?? { boardS: this.plant.t, wallS: 0, maxBehindMs: 0, restarts: 0, droppedBytes: 0, code };
        s.code = code;
        this.summary = s;
        this.emit('log', this.encoderStatsLine());
        this.emit('exit', s);
        resolve(s);
      });
    });
    this.child.stdin!.on('error', () => undefined); // the harness died: its exit says so
    let err = '';
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      let lf;
      while ((lf = err.indexOf('\n')) >= 0) {
        this.emit('log', err.slice(0, lf));
        err = err.slice(lf + 1);
      }
    });
    let buf = '';
    this.child.stdout!.setEncoding('latin1').on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop()!;
      let answer = '';
      for (const line of lines) answer += this.onLine(line);
      if (answer) this.child.stdin!.write(answer);
    });
  }

  /** Builds what is missing, starts the harness and resolves once its pty exists. */
  static async start(opts: FirmwareSimOptions): Promise<FirmwareSim> {
    const board = opts.board ?? 'uno';
    let files: { elf: string; harness: string };
    if (opts.elf !== undefined) {
      if (!existsSync(opts.elf)) throw new FirmwareSimError(`no firmware image at ${opts.elf}`);
      files = { elf: opts.elf, harness: buildHarness() };
    } else if (board === 'uno-firmata') {
      throw new FirmwareSimError(
        'the uno-firmata pin map is for a stock Firmata image: give its ELF (firmware-protocol/firmata-watchdog/build-stock.sh)',
      );
    } else {
      files = buildFirmwareSim(
        board,
        opts.rig.encoders.map((e) => e.countsPerRev),
      );
    }
    const sim = new FirmwareSim({ ...opts, board }, files);
    await new Promise<void>((resolve, reject) => {
      const onExit = (s: FirmwareSimSummary): void =>
        reject(new FirmwareSimError(`the simulator harness exited (code ${s.code}) before it opened its pty`));
      sim.once('exit', onExit);
      sim.child.on('error', (e) => reject(new FirmwareSimError(`cannot start ${files.harness}: ${e.message}`)));
      const poll = (): void => {
        if (sim.ptyPath) {
          sim.off('exit', onExit);
          resolve();
        } else setTimeout(poll, 5);
      };
      poll();
    });
    return sim;
  }

  /**
   * One line from the harness; returns what to answer. Slice lines come 4000 times a second: they are
   * checked by hand without allocating much (a garbage-collector pause here is a pause of the board).
   */
  private onLine(line: string): string {
    const kind = line[0];
    if (kind === 'S') {
      const a = line.indexOf(' ', 2);
      const b = line.indexOf(' ', a + 1);
      const c = line.indexOf(' ', b + 1);
      const d = line.indexOf(' ', c + 1);
      const e = line.indexOf(' ', d + 1);
      const f = line.indexOf(' ', e + 1);
      const index = Number(line.slice(2, a));
      const tUs = Number(line.slice(a + 1, b));
      const d1 = Number(line.slice(b + 1, c));
      const d2 = Number(line.slice(c + 1, d));
      const p1 = Number(line.slice(d + 1, e));
      const p2 = Number(line.slice(e + 1, f));
      const stale = Number(line.slice(f + 1));
      if (!(
        Number.isInteger(index) &&
        index >= 0 &&
        tUs >= 0 &&
        Math.abs(d1) <= 1 &&
        Math.abs(d2) <= 1 &&
        Number.isInteger(p1) &&
        Number.isInteger(p2) &&
        Number.isInteger(stale) &&
        stale >= 0
      )) {
        this.emit('log', `firmware-sim: a bad slice line from the harness: ${line}`);
        return '';
      }
      this.duty[0] = d1;
      this.duty[1] = d2;
      this.plant.setDuty(this.duty);
      this.plant.advance(tUs / 1e6);
      this.comparePins(p1, p2, stale);
      this.predictedCounts();
      this.slices++;
      if (this.listenerCount('slice') > 0) this.emit('slice', { index, boardTime: tUs / 1e6, duty: [d1, d2], pins: [p1, p2], stale });
      const two = this.plant.joints > 1;
      return `C ${index} ${this.counts[0] ?? 0} ${two ? (this.counts[1] ?? 0) : 0} ${this.sliceVelocity(0).toFixed(3)} ${two ? this.sliceVelocity(1).toFixed(3) : 0}\n`;
    }
    const f = line.split(' ');
    if (kind === 'P') {
      const p = PtyLine.safeParse(f);
      if (p.success) this.ptyPath = p.data[1];
      else this.emit('log', `firmware-sim: the harness did not name its pty: ${line}`);
    } else if (kind === 'Z')
      this.emit('outputs-off', { boardTime: Number(f[1]) / 1e6, sinceLineS: Number(f[2]) / 1e6, sinceByteS: Number(f[3]) / 1e6 });
    else if (kind === 'B') this.emit('reset', { boardTime: Number(f[1]) / 1e6 });
    else if (kind === 'H') this.emit('host', { open: f[1] === '1', boardTime: Number(f[2]) / 1e6, discardedBytes: Number(f[3]) });
    else if (kind === 'K') this.emit('handshake', { boardTime: Number(f[1]) / 1e6 });
    else if (kind === 'L') this.emit('behind', { boardTime: Number(f[1]) / 1e6, behindS: Number(f[2]) / 1e6 });
    else if (kind === 'E') {
      this.summary = {
        boardS: Number(f[1]),
        wallS: Number(f[2]),
        maxBehindMs: Number(f[3]),
        restarts: Number(f[4]),
        droppedBytes: Number(f[5]),
        code: null,
      };
    }
    return '';
  }

  /** The plant's noise-free angle in counts of encoder j, `aheadS` ahead at its present velocity. */
  private idealCounts(j: number, aheadS: number): number {
    const e = this.sensor[j]!;
    return (e.sign * (this.plant.encoderQ[j]! + this.plant.encoderQd[j]! * aheadS - e.zero) * e.cpr) / (2 * Math.PI);
  }

  private comparePins(p1: number, p2: number, stale: number): void {
    if (this.slices === 0) return; // the pins start at 0 and wind to the plant once the firmware is up
    for (let j = 0; j < this.plant.joints; j++) {
      const err = this.idealCounts(j, 0) - (j === 0 ? p1 : p2);
      this.pinSq[j]! += err * err;
      if (stale > 0) this.staleSq[j]! += err * err;
    }
    this.pinSlices++;
    if (stale > 0) this.staleSlices++;
    if (stale > this.maxStale) this.maxStale = stale;
  }

  /** The plant's velocity [counts per slice] of encoder j: the harness goes on at it while this side is late. */
  private sliceVelocity(j: number): number {
    const e = this.sensor[j]!;
    return (e.sign * this.plant.encoderQd[j]! * e.cpr * this.sliceS) / (2 * Math.PI);
  }

  /** The plant's counts at the end of the next slice (or now, without prediction) into this.counts. */
  private predictedCounts(): void {
    // (the encoders' side of the joints: the motor side when the plant has gearbox play or stiction)
    const q = this.plant.encoderQ;
    const saved = q.slice();
    for (let j = 0; j < this.plant.joints; j++) q[j] = q[j]! + this.plant.encoderQd[j]! * this.predictS;
    this.plant.counts(this.counts);
    for (let j = 0; j < this.plant.joints; j++) q[j] = saved[j]!;
  }

  /** The encoder pins against the plant so far (see EncoderPinStats). */
  encoderStats(): EncoderPinStats {
    const n = this.plant.joints;
    const rms = (sq: number[], k: number): number[] => sq.slice(0, n).map((s) => (k > 0 ? Math.sqrt(s / k) : 0));
    return {
      slices: this.pinSlices,
      rmsCounts: rms(this.pinSq, this.pinSlices),
      staleRmsCounts: rms(this.staleSq, this.staleSlices),
      staleSlices: this.staleSlices,
      maxStale: this.maxStale,
    };
  }

  /** The encoder pins against the plant so far, in degrees of the joint's encoder (`twolink rig --firmware --report` ends with it). */
  encoderStatsDeg(): { slices: number; rmsDeg: number[]; staleSlices: number; maxStale: number; staleRmsDeg: number[] } {
    const st = this.encoderStats();
    const deg = (c: readonly number[]): number[] => c.map((x, j) => (x * 360) / this.sensor[j]!.cpr);
    return {
      slices: st.slices,
      rmsDeg: deg(st.rmsCounts),
      staleSlices: st.staleSlices,
      maxStale: st.maxStale,
      staleRmsDeg: deg(st.staleRmsCounts),
    };
  }

  /** The encoder pins against the plant, one line for people (logged when the harness exits). Board-time figures of this run. */
  encoderStatsLine(): string {
    const st = this.encoderStatsDeg();
    const deg = (d: readonly number[]): string => d.map((x) => x.toFixed(4)).join(' / ');
    return (
      `firmware-sim: encoder pins vs the plant over ${st.slices} slices: RMS ${deg(st.rmsDeg)} deg; ` +
      `${st.staleSlices} slices ran ahead of the plant process (at most ${st.maxStale}), RMS there ${deg(st.staleRmsDeg)} deg`
    );
  }

  /** Process id of the harness. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Resets the AVR now (the plant goes on). */
  reset(): void {
    this.child.stdin!.write('R\n');
  }

  /**
   * Resets the AVR once its motor pins have been driven (a duty not zero) for `drivenS` of board time
   * [s]; calls `onReset` with the board time of the reset, once.
   */
  resetAfterDriving(drivenS: number, onReset: (boardTime: number) => void = () => undefined): void {
    let since: number | undefined;
    const check = (s: { boardTime: number; duty: [number, number] }): void => {
      if (s.duty[0] !== 0 || s.duty[1] !== 0) since ??= s.boardTime;
      if (since === undefined || s.boardTime - since <= drivenS) return;
      this.off('slice', check);
      this.reset();
      onReset(s.boardTime);
    };
    this.on('slice', check);
  }

  /** Stops the harness; resolves with its totals. */
  stop(): Promise<FirmwareSimSummary> {
    if (!this.summary) this.child.stdin!.end('Q\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    return this.exited.finally(() => clearTimeout(timer));
  }
}
