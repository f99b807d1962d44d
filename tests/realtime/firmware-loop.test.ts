// Firmware in the loop: our firmware's ELF in simavr (firmware-protocol/firmware/sim/fil_harness.c),
// its UART on a pty, the mock rig's Plant closing the loop (src/mock/firmware-sim.ts). The reach runs
// through the CLI (`twolink rig --firmware --pty` + `twolink run --port`); the fault cases talk to the
// firmware directly and read what crossed the pins. Every wait is for an event (a line, a frame, a
// process exit); the times asserted are the simulated board's, which do not depend on the machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed, type TestContext } from 'vitest';
import { hangGuardMs } from '../helpers/hang-guard.js';
import { loadRig } from '../../src/config/load.js';
import { FirmwareSim } from '../../src/mock/firmware-sim.js';
import { FrameHost } from '../../src/mock/frame-host.js';
import { parseMockReport, type MockReport } from '../../src/mock/mock-report.js';
import { lockstepReach, mockVirtualReach } from '../../src/bench/firmware-tracking.js';
import {
  blameOf,
  rigFault,
  retryIfStarved,
  stockFirmataElf,
  stockKilledThenRun,
  stockReach,
  stockTwice,
  unoFirmataRig,
  type StockRun,
} from '../../src/bench/firmware-stock.js';
import { processThreads, requestRealtime, schedPolicy } from '../../src/time/threads.js';
import { RIG_STARVED_ATTEMPTS } from '../../src/mock/starvation.js';
import { BIN, lastJson, ROOT, twolink, whyExit } from '../helpers/cli.js';
import { own } from '../helpers/owned-children.js';

const INSTALL =
  'simavr is not installed: sudo apt-get install simavr libsimavr-dev gcc-avr avr-libc arduino-core-avr (.ci/run installs them)';
const needSimavr = (): void => {
  if (!existsSync('/usr/include/simavr/sim_avr.h') || !existsSync('/usr/bin/avr-gcc')) throw new Error(INSTALL);
};

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/**
 * `twolink rig --firmware --pty --report`: resolves with the pty path (its `pty` report), its stderr and
 * its reports (stdout, one JSON line each: the `firmware-end` totals come when it ends).
 */
function startFirmwareRig(): Promise<{
  path: string;
  child: ChildProcess;
  stderr: () => string;
  reports: MockReport[];
  exited: Promise<number | null>;
}> {
  return new Promise((resolve, reject) => {
    // --rt: SCHED_FIFO for the simulator and the plant when Linux allows it (it says so when not).
    const child = spawn(process.execPath, [BIN, 'rig', '--rig', 'rigs/mock-arm.json', '--firmware', '--pty', '--rt', '--report'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    own(child);
    children.push(child);
    let err = '';
    const reports: MockReport[] = [];
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const r = parseMockReport(line);
      reports.push(r);
      if (r.kind === 'pty') resolve({ path: r.host, child, stderr: () => err, reports, exited });
    });
    child.on('exit', (code) => reject(new Error(`twolink rig --firmware exited (${code}) before printing its pty: ${err}`)));
  });
}

const ackOf = (l: string): string => l.split(' ')[2]!;
/** A T frame with the STOP flag: the board has done an S (waiting for its A would hang on a lost line). */
const stopped = (l: string): boolean => l.startsWith('T ') && (Number.parseInt(l.split(' ')[6]!.slice(0, 2), 16) & 0x04) !== 0;

/**
 * How far [ms] from board time `at` [s] the encoder pins of joint `j` showed `count`: 0 when a slice
 * that passed it spans `at`, else the signed distance to the nearest such slice (Infinity: never).
 */
/** Timer0's overflow period at 16 MHz [ms]: Arduino's wiring.c MICROSECONDS_PER_TIMER0_OVERFLOW, 64 * 256 cycles. */
const TIMER0_OVERFLOW_MS = (64 * 256) / 16e3;

function pinOffsetMs(slices: readonly { boardTime: number; pins: readonly number[] }[], j: number, count: number, at: number): number {
  let best = Infinity;
  for (let k = 1; k < slices.length; k++) {
    const a = slices[k - 1]!.pins[j]!;
    const b = slices[k]!.pins[j]!;
    if (Math.min(a, b) > count || Math.max(a, b) < count) continue;
    const t0 = slices[k - 1]!.boardTime;
    const t1 = slices[k]!.boardTime;
    const d = at < t0 ? t0 - at : at > t1 ? t1 - at : 0;
    if (Math.abs(d) < Math.abs(best)) best = d;
  }
  return best * 1e3;
}

describe('the twolink firmware in simavr, closing the loop with the mock plant', () => {
  it(
    'twolink run completes the reach through it (twolink rig --firmware --pty)',
    async () => {
      needSimavr();
      const rig = await startFirmwareRig();
      // The simulated AVR runs in a simulator that a busy CI machine can hold up for ~100 ms, which the
      // host would rightly call a lost link: the host side gets a 300 ms watchdog here (the firmware's
      // own 100 ms watchdog is tested below, in board time).
      const file = join(mkdtempSync(join(tmpdir(), 'twolink-fil-')), 'mock-arm-300ms.json');
      const spec = JSON.parse(readFileSync(join(ROOT, 'rigs/mock-arm.json'), 'utf8')) as { link: { watchdogMs?: number } };
      spec.link.watchdogMs = 300;
      writeFileSync(file, JSON.stringify(spec));
      const r = await twolink(['run', '--rig', file, '--port', rig.path, '--traj', 'reach', '--json', '--rt'], { timeoutMs: 90_000 });
      rig.child.kill('SIGINT');
      await rig.exited;
      expect(r.code, `${r.stdout.trim().split('\n').pop()}\n${r.stderr}\n${rig.stderr()}`).toBe(0);
      const s = lastJson(r);
      expect(s.stop).toEqual({ kind: 'done' });
      expect(s.stopOutcome).toBe('acknowledged');
      // The same reach on the TS mock measures 0.04 / 0.15 deg in virtual time; through the firmware,
      // in real time on a shared machine, 0.15-0.35 deg. The bound leaves room for a loaded machine.
      for (const rms of s.tracking.rmsDeg) expect(rms).toBeLessThan(1.5);
      expect(s.tracking.samples).toBeGreaterThan(100);
      const end = rig.reports.find((x) => x.kind === 'firmware-end');
      expect(end, rig.stderr()).toBeDefined();
      expect(end!.boardS).toBeGreaterThan(0);
      expect(end!.wallS).toBeGreaterThan(0);
      expect([0, null]).toContain(end!.code); // null: the harness stopped by the rig's signal
      // The encoder pins against the plant (board time, every slice): quantization (0.29 counts RMS) and
      // the plant's noise (0.3) give 0.42 counts; the pins go on at the plant's velocity while this
      // machine holds the plant process up. Frozen pins (the old harness) measured 0.8 counts on joint 1.
      expect(end!.pins.slices).toBeGreaterThan(4000);
      expect(end!.pins.rmsDeg[0]! / (360 / 4800)).toBeLessThan(1);
      expect(end!.pins.rmsDeg[1]! / (360 / 2400)).toBeLessThan(1);
    },
    hangGuardMs(120_000),
  );

  it(
    'in board time (host lock-step) the reach tracks as on the TS mock in virtual time, within the encoder quantum',
    async () => {
      needSimavr();
      // In lock-step the board waits for the host (up to 1 s for an answer the host may never send), and
      // the host's lost-link timer is wall time: a 1 s watchdog, 5 s of samples before the link is lost.
      const file = join(mkdtempSync(join(tmpdir(), 'twolink-fil-')), 'mock-arm-lockstep.json');
      const spec = JSON.parse(readFileSync(join(ROOT, 'rigs/mock-arm.json'), 'utf8')) as {
        link: { watchdogMs?: number; lostAfterTicks?: number };
      };
      spec.link.watchdogMs = 1000;
      spec.link.lostAfterTicks = 2500;
      writeFileSync(file, JSON.stringify(spec));
      const rig = loadRig(file);
      // The harness waits for the host's answers up to 30 s (not 1 s): a six-hog CI run once held the host
      // (at normal priority, --no-rt) past 1 s, and the harness went on without it, out of lock-step.
      const fw = await lockstepReach(rig, BIN, ROOT, { predict: true, sliceUs: 250, hostWaitMs: 30_000 });
      const mock = await mockVirtualReach(rig);
      // Every assertion names how the run went (a six-hog failure once left only the test's name).
      const how = `end ${JSON.stringify(fw.end)}; lock-step: ${fw.lockstep}; pins ${JSON.stringify(fw.pins)}; ${fw.wallS.toFixed(0)} s of wall time, load ${loadavg()[0]!.toFixed(1)}`;
      expect(fw.end, how).toEqual({ kind: 'stopped', stop: { kind: 'done' } });
      const quantum = rig.encoders.map((e) => 360 / e.countsPerRev);
      for (const j of [0, 1])
        expect(
          Math.abs(fw.rmsDeg[j]! - mock[j]!),
          `joint ${j + 1}: firmware ${fw.rmsDeg.join(',')} vs mock ${mock.join(',')}; ${how}`,
        ).toBeLessThan(quantum[j]!);
      // No slice ran ahead of the plant, and none went on without the host but a T before its loop started
      // and the last one: lock-step held.
      expect(fw.pins.staleSlices, how).toBe(0);
      expect(fw.timeouts, how).toBeLessThanOrEqual(2);
      expect(fw.pins.slices, how).toBeGreaterThan(4000);
    },
    hangGuardMs(120_000),
  );

  describe('faults through the real firmware', () => {
    let sim: FirmwareSim;
    let host: FrameHost;
    // Every slice the harness simulated: board time and the mean duty at the motor pins.
    const slices: { boardTime: number; duty: [number, number]; counts: number[]; pins: [number, number]; stale: number }[] = [];
    const simEvents: string[] = [];
    /** Resolves true once `cond` holds after a slice (false if the harness ends first). */
    const until = (cond: () => boolean): Promise<boolean> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (!cond()) return;
          sim.off('slice', check);
          resolve(true);
        };
        sim.on('slice', check);
        sim.once('exit', () => resolve(false));
      });
    beforeAll(async () => {
      needSimavr();
      sim = await FirmwareSim.start({ rig: loadRig('rigs/mock-arm.json'), board: 'uno' });
      sim.on('slice', (x) =>
        slices.push({ boardTime: x.boardTime, duty: x.duty, counts: sim.plant.counts(), pins: x.pins, stale: x.stale }),
      );
      for (const kind of ['log', 'host', 'reset', 'exit'] as const)
        sim.on(kind, (e: unknown) => simEvents.push(`${kind} ${JSON.stringify(e)}`));
      host = await FrameHost.open(sim.ptyPath);
      await host.handshake();
    }, hangGuardMs(60_000));
    // A failure (a hang guard's too) says where the board and the link stood: the last lines the host
    // read, the last slice the harness simulated, and what the harness said (a reset, a host seen
    // closed, its exit). A hang once seen under load left nothing else to go on.
    beforeEach(() => {
      onTestFailed(() => {
        const last = slices.at(-1);
        console.error(
          [
            `firmware-loop: ${host?.lines.length ?? 0} lines read, the last: ${JSON.stringify(host?.lines.slice(-5) ?? [])}`,
            `${slices.length} slices kept, the last at board time ${last?.boardTime.toFixed(4) ?? '-'} s; load ${loadavg()[0]!.toFixed(1)}`,
            `harness events: ${simEvents.slice(-10).join(' | ') || 'none'}`,
          ].join('\n'),
        );
      });
    });
    afterAll(async () => {
      await host?.close();
      await sim?.stop();
      // Let the slices go: this process steps the stock image's plant below, where a larger heap means
      // longer garbage-collector pauses of the plant's thread (a plant late past the harness's lead
      // stalls the simulated board).
      slices.length = 0;
    });

    it(
      "the firmware counts the quadrature edges it is given: the counts in T are the encoder pins' at that board time, no ENC flag; the pins follow the plant",
      async () => {
        host.send('W', 1000);
        host.send('N', 1);
        host.send('R', 500);
        const ts: string[] = [];
        for (let k = 0; k < 300; k++) {
          ts.push(await host.next((l) => l.startsWith('T ')));
          host.send('M', k < 150 ? 900 : -900, k < 150 ? -700 : 700); // fast, then reversing
        }
        host.send('S');
        await host.next(stopped);
        // t_us is micros() since the AVR's power-on; the slices carry the simulation's cycle count. They
        // differ by the Arduino core's start-up, by where in its slice a pin moved (slices are 250 us), and
        // now and then by one Timer0 overflow (1.024 ms; test/sim_test.c met it first: Arduino's micros()
        // adds an overflow when TOV0 is set and TCNT0 < 255, wiring.c, and simavr 1.6's Timer0 does not
        // always raise TOV0 on the cycle TCNT0 reads as wrapped), and
        // a sleeping AVR may run up to one Timer0 period past a slice's end before the S line. So for each
        // T and joint: the board time at which the pins showed its count (the slice in which they passed
        // it), nearest to t_us. The counts are the pins' if those offsets sit together (almost all within
        // 0.6 ms of their median, every one within 2.5 ms), the median itself within 1 ms.
        const offsets: { t: string; j: number; ms: number }[] = [];
        for (const t of ts.slice(20)) {
          const f = t.split(' ');
          expect(Number.parseInt(f[6]!.slice(0, 2), 16) & 0x20, t).toBe(0); // no illegal transition
          const at = Number(f[3]) / 1e6;
          for (const j of [0, 1]) offsets.push({ t, j: j + 1, ms: pinOffsetMs(slices, j, Number(f[4 + j]), at) });
        }
        expect(offsets.length).toBeGreaterThan(200);
        const sorted = offsets.map((o) => o.ms).sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)]!;
        const far = offsets.filter((o) => Math.abs(o.ms - median) > 0.6);
        const show = (os: typeof offsets): string =>
          os
            .slice(0, 5)
            .map((o) => `${o.t} joint ${o.j}: ${o.ms.toFixed(3)} ms`)
            .join('; ');
        // The median within 1 ms, or within 1 ms of one Timer0 overflow: CI's trial of 7f7ff5b (load 2.9) had
        // 1.210 ms where quiet runs have 0.264-0.266, the offsets clustered about it (its micros() a whole
        // overflow behind the cycle count from early in the run: one overflow not counted). Said, not failed.
        const lostOverflow = Math.abs(median) >= 1 && Math.abs(median - TIMER0_OVERFLOW_MS) < 1;
        if (lostOverflow)
          console.warn(`firmware-loop: T's t_us one Timer0 overflow behind the board's cycles (median offset ${median.toFixed(3)} ms)`);
        expect(
          lostOverflow ? Math.abs(median - TIMER0_OVERFLOW_MS) : Math.abs(median),
          `median offset of the pins' board time from T's t_us [ms]`,
        ).toBeLessThan(1);
        expect(far.length, `T counts off the pins by more than 0.6 ms (median ${median.toFixed(3)} ms): ${show(far)}`).toBeLessThanOrEqual(
          offsets.length * 0.05,
        );
        const wild = offsets.filter((o) => Math.abs(o.ms - median) > 2.5);
        expect(wild, `T counts the pins never showed within 2.5 ms: ${show(wild)}`).toEqual([]);
        // The pins follow the plant: within a count on the slices whose answer came in time (the plant
        // predicts one slice ahead; when this process answers late the pins go on at its last velocity).
        const onTime = slices.filter((x) => x.stale === 0 && x.boardTime > 0.05);
        expect(onTime.length).toBeGreaterThan(100);
        for (const j of [0, 1]) {
          const rms = Math.sqrt(onTime.reduce((a, x) => a + (x.pins[j]! - x.counts[j]!) ** 2, 0) / onTime.length);
          expect(rms, `joint ${j + 1}: pins vs plant`).toBeLessThan(1.5);
        }
        const c0 = Number(ts[0]!.split(' ')[4]);
        const moved = Math.max(...ts.map((t) => Math.abs(Number(t.split(' ')[4]) - c0)));
        expect(moved).toBeGreaterThan(100); // it did move, both ways: hundreds of edges
      },
      hangGuardMs(60_000),
    );

    it(
      'host silent: the watchdog zeroes the motor pins 100 ms (board time) after the last command',
      async () => {
        host.send('W', 1000); // while the host drives: a slow test process must not meet the watchdog
        host.send('N', 1);
        host.send('R', 500);
        await host.next((l) => l.startsWith('T '));
        for (let k = 0; k < 20; k++) {
          await host.next((l) => l.startsWith('T '));
          host.send('M', 500, -300);
        }
        // Driving (whatever became of a line lost on a busy machine): whole slices at the commanded duty.
        expect(await until(() => slices.length > 4 && slices.slice(-4).every((x) => x.duty[0] === 0.5 && x.duty[1] === -0.3))).toBe(true);
        const off = new Promise<{ boardTime: number; sinceLineS: number }>((r) => sim.once('outputs-off', r));
        host.skip();
        host.send('W', 100); // the last line; then silence
        const cut = await off;
        // The 100 ms one: an E of the 1000 ms watchdog from the silence between two tests may still be
        // on its way when skip() runs on a busy machine (seen once under load 8).
        const wdt = await host.next((l) => l.startsWith('E ') && l.includes(' WDT ') && !l.includes('for 1000 ms'));
        expect(wdt).toMatch(/WDT no command for 100 ms/);
        // PROTOCOL.md section 5: more than the timeout after the last valid frame, on the board's clock
        // (micros()); the main loop sleeps between interrupts, so the check runs within Timer0's 1.024 ms.
        // Measured here in simulated cycles, where simavr 1.6's Timer0 lets micros() step by one overflow
        // (1.024 ms) now and then (make sim-test): within +-1.5 ms of 100 ms.
        // The timeout runs from when the main loop accepts the frame, which can be a few ms after its LF
        // reached the UART when the loop still works through the M lines before it (measured 99.96 to
        // 104.6 ms here).
        expect(cut.sinceLineS).toBeGreaterThan(0.0985);
        expect(cut.sinceLineS).toBeLessThan(0.108);
        // Until the cut the pins drove the last command, whole slices of it.
        const before = slices.filter((x) => x.boardTime > cut.boardTime - 0.05 && x.boardTime < cut.boardTime - 0.001);
        expect(before.length).toBeGreaterThan(190);
        for (const x of before) expect([x.duty[0], x.duty[1]]).toEqual([0.5, -0.3]);
        expect(slices.at(-1)!.duty).toEqual([0, 0]);
        const t = await host.next((l) => l.startsWith('T '));
        expect(t.split(' ')[6]!.slice(0, 2)).toBe('02'); // WDT set, EN clear
      },
      hangGuardMs(60_000),
    );

    it(
      'a line with a bad CRC gets E CRC and changes nothing at the pins',
      async () => {
        host.send('W', 1000);
        host.send('N', 1);
        const good = host.send('M', 200, 100);
        await host.next((l) => l.startsWith('T ') && ackOf(l) === String(good));
        const steady = await until(() => slices.length > 8 && slices.slice(-8).every((x) => x.duty[0] === 0.2 && x.duty[1] === 0.1));
        expect(steady).toBe(true);
        const mark = slices.length;
        host.skip();
        host.raw('M 999 900 900*0000\n');
        const e = await host.next((l) => l.startsWith('E '));
        expect(e).toMatch(/^E \d+ - CRC /);
        host.send('P');
        const t = await host.next((l) => l.startsWith('T ') && (Number.parseInt(l.split(' ')[6]!.slice(0, 2), 16) & 0x08) !== 0);
        expect(ackOf(t)).toBe(String(good)); // RXERR reported, the applied command unchanged
        await until(() => slices.length > mark + 80); // 20 ms of board time after the bad line
        for (const x of slices.slice(mark)) expect([x.duty[0], x.duty[1]]).toEqual([0.2, 0.1]);
        host.send('S');
        await host.next(stopped);
      },
      hangGuardMs(60_000),
    );
  });

  it(
    'a reset mid-run: the host sees the banner and stops with fault:board-reset',
    async () => {
      needSimavr();
      const sim = await FirmwareSim.start({ rig: loadRig('rigs/mock-arm.json'), board: 'uno' });
      await requestRealtime(sim.pid, 45); // the board keeps real time on a busy machine (if Linux allows)
      try {
        // Reset once the arm has been driven for 0.5 s of board time.
        let resetAt: number | undefined;
        sim.resetAfterDriving(0.5, (t) => (resetAt = t));
        const resets: number[] = [];
        sim.on('reset', (e) => resets.push(e.boardTime));
        const r = await twolink(['run', '--rig', 'rigs/mock-arm.json', '--port', sim.ptyPath, '--traj', 'reach', '--json', '--rt'], {
          timeoutMs: 90_000,
        });
        expect(resetAt, r.stderr).toBeDefined();
        expect(resets).toHaveLength(1);
        expect(r.code, whyExit(r)).toBe(1);
        expect(lastJson(r).stop).toMatchObject({ kind: 'fault', fault: { kind: 'board-reset' } });
      } finally {
        await sim.stop();
      }
    },
    hangGuardMs(120_000),
  );
});

// The stock ConfigurableFirmata 2.10 image with FirmataEncoder, PJRC Encoder and our FirmataWatchdog,
// built by firmware-protocol/firmata-watchdog/build-stock.sh from the upstream sources beside the
// project (../shared/third_party/firmata-stock; src/bench/firmware-stock.ts stockFirmataElf), or the
// ELF TWOLINK_STOCK_FIRMATA_ELF names. Under CI (CI set) a missing image fails these tests; elsewhere
// they are skipped with one line. The rig arms the watchdog with 300 ms so that a busy machine's host
// stalls (which end a run as link-lost at 100 ms) do not decide the outcome; a run that fails while the
// simulated board fell behind the wall clock says the rig was starved (blameOf).
const STOCK = stockFirmataElf(ROOT);
const IN_CI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';
if (STOCK.elf === undefined && !IN_CI) console.warn(`stock ConfigurableFirmata tests skipped: ${STOCK.why}`);
const needStock = (): string => {
  if (STOCK.elf === undefined) throw new Error(`CI runs the stock Firmata tests, and there is no image: ${STOCK.why}`);
  return STOCK.elf;
};
let stockStart = 0;
/** The stock tests whose rig starved on every attempt (skipped, not judged), for .ci/run's closing note. */
const notJudged: string[] = [];
describe.skipIf(STOCK.elf === undefined && !IN_CI)('stock ConfigurableFirmata + FirmataWatchdog in simavr (build-stock.sh)', () => {
  beforeAll(() => void (stockStart = performance.now()));
  afterAll(() => {
    // For .ci/run's closing note: how long these took (real time) and the machine's load.
    const dir = join(ROOT, 'firmware-protocol/firmware/build/stock-firmata');
    if (!existsSync(dir)) return;
    const s = (performance.now() - stockStart) / 1000;
    writeFileSync(
      join(dir, 'tests-took.txt'),
      `the stock ConfigurableFirmata tests took ${s.toFixed(1)} s (real time, load ${loadavg()[0]!.toFixed(1)} at the end)${notJudged.length > 0 ? `; NOT JUDGED (the simulated board starved on every attempt): ${notJudged.join('; ')}` : ''}\n`,
    );
  });

  /**
   * The test's own process stays at normal priority (the stock rig runs in its own process,
   * firmware-stock-main.ts): a test process at real time ran above the host's loop thread.
   */
  const expectNormalPriority = (): void => {
    const rt = processThreads().filter((t) => schedPolicy(t) > 0);
    expect(rt, 'threads of the test process at a real-time policy').toEqual([]);
  };
  /**
   * The runs, again while the rig starved (retryIfStarved, RIG_STARVED_ATTEMPTS in all). Runs that failed
   * with the rig keeping time fail the test. When the simulated board starved on every attempt the host
   * could not be judged: the test is skipped, saying so on stderr and in .ci/run's closing note
   * (tests-took.txt). A real board does not starve; on this 2-core VM the simulated one lagged 75-200 ms
   * on every attempt in whole runs of this file, quiet, on 2026-12-07 from about 11:00 UTC (its harness at
   * 64-74 % of a core, against 46 % and 8 of 8 reaches done at 10:45): docs/realtime.md.
   */
  const attempt = async <T extends StockRun[]>(ctx: TestContext, run: () => Promise<T>, ok: (runs: T) => boolean): Promise<T> => {
    const { runs, starvedBefore } = await retryIfStarved(run, ok, (line) => console.warn(`stock Firmata: ${line}`));
    const starved = runs.map(rigFault).filter((w): w is string => w !== undefined);
    if (!ok(runs) && starved.length > 0) {
      const why = `the simulated board starved on all ${RIG_STARVED_ATTEMPTS} attempts, so the host could not be judged (a real board does not starve): the last: ${starved.join('; ')}${starvedBefore !== undefined ? `; before: ${starvedBefore}` : ''}`;
      console.warn(`stock Firmata: NOT JUDGED: ${ctx.task.name}: ${why}`);
      notJudged.push(ctx.task.name);
      ctx.skip(why);
    }
    return runs;
  };
  const done = (r: StockRun): boolean => r.end.kind === 'stopped' && r.end.stop.kind === 'done';

  it(
    'two reaches on one board that is not reset between them both complete (FirmataEncoder still has the encoders attached)',
    async (ctx) => {
      needSimavr();
      expectNormalPriority();
      const runs = await attempt(
        ctx,
        () => stockTwice(unoFirmataRig(ROOT, 300), needStock(), BIN, ROOT),
        (rs) => rs.every(done),
      );
      expectNormalPriority();
      // The rig's figures that blameOf weighs were measured on every slice of both runs.
      for (const r of runs) {
        expect(r.plant.slices, blameOf(r)).toBeGreaterThan(1000);
        expect(Number.isFinite(r.lagMs.held) && r.lagMs.held <= r.lagMs.peak, blameOf(r)).toBe(true);
      }
      expect(
        runs.map((r) => r.end),
        runs.map(blameOf).join('; '),
      ).toEqual([
        { kind: 'stopped', stop: { kind: 'done' } },
        { kind: 'stopped', stop: { kind: 'done' } },
      ]);
    },
    hangGuardMs(300_000),
  );

  it(
    'a run killed with SIGKILL mid-reach, then a new run on the same board: done, nothing corrupt, 0 lost samples',
    async (ctx) => {
      needSimavr();
      const [killed, next] = await attempt(
        ctx,
        () => stockKilledThenRun(unoFirmataRig(ROOT, 300), needStock(), BIN, ROOT),
        ([k, n]) => k!.end.kind === 'killed' && done(n!) && n!.corrupt === 0 && n!.lost === 0,
      );
      expect(killed!.end, `the first run ended before it was killed: ${blameOf(killed!)}`).toEqual({ kind: 'killed' });
      expect(next!.end, blameOf(next!)).toEqual({ kind: 'stopped', stop: { kind: 'done' } });
      // The tail of the report the board was sending when the new session opened is not corruption
      // (firmata-link.ts counts from the board's answer). The board skips no report (simavr runs its
      // loop() in board time; FirmataReporting only skips when loop() is held up an interval), so none
      // is lost: the 10-20 a clean run used to count were reports held up on their way, which the
      // host's report clock took for a gap (firmata-clock.ts).
      expect(next!.corrupt, blameOf(next!)).toBe(0);
      expect(next!.lost, blameOf(next!)).toBe(0);
    },
    hangGuardMs(300_000),
  );

  it(
    'host killed while the motors run: the board zeroes them the watchdog time after its last byte (board time)',
    async (ctx) => {
      needSimavr();
      const [r] = await attempt(
        ctx,
        async () => [await stockReach(unoFirmataRig(ROOT, 300), needStock(), BIN, ROOT, 1.0)],
        ([x]) => x.end.kind === 'killed' && x.watchdogS !== undefined,
      );
      expect(r.end, `the run ended before the host was killed: ${blameOf(r)}`).toEqual({ kind: 'killed' });
      // The feature compares millis() (1.024 ms steps, a 2 ms jump every ~42 ms) against the last complete
      // message; the host may die in the middle of one (its last byte then comes later): -1 / +2.5 ms.
      expect(r.watchdogS, blameOf(r)).toBeGreaterThan(0.299);
      expect(r.watchdogS).toBeLessThan(0.3025);
    },
    hangGuardMs(300_000),
  );
});
