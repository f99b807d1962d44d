/**
 * `twolink rig --firmware`: the firmware in the loop (src/mock/firmware-sim.ts) as a process of its own.
 * The pty path is the first stdout line, as with `twolink rig --pty`; what happens on the board side
 * (the harness falling behind the wall clock, the firmware zeroing the motors while the host is silent,
 * resets) goes to stderr, one line each, and a final line says how the run kept up with real time.
 */
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { MockPart } from '../config/parts.js';
import { applyInjection, formatInjection, injectionSchedule, refusal, type Injection, type InjectionSite } from './injections.js';
import { noRealtimeLine, requestRealtime, requestRealtimeProcess, threadId, type RtResult } from '../time/threads.js';
import { spawnTied } from './tied.js';
import { RIG_STARVED_MS, starvedLine } from './starvation.js';
import { FirmwareSim, type FirmwareSimSummary, type HarnessBoard } from './firmware-sim.js';
import type { MockReport } from './mock-report.js';

export interface FirmwareMockOptions {
  board: HarnessBoard;
  /** A firmware image built elsewhere (a stock Firmata image, with board `uno-firmata`); default: ours, built for the rig. */
  elf?: string;
  injections: readonly Injection[];
  /** Lock-step slice [us]. @default 250 */
  sliceUs?: number;
  /** Ask for SCHED_FIFO for the simulator (45) and for this process, which steps the plant (44). */
  rt?: boolean;
  /** Where lines go (stderr). */
  log: (line: string) => void;
  /** Where the pty path goes (stdout). */
  out: (line: string) => void;
  /** `--report`: the pty path and the run's totals as report lines (mock-report.ts) instead of the path alone. */
  report?: (r: MockReport) => void;
}

/** What injections act on here: the plant, and the board (the real firmware) only by a reset. */
function firmwareSite(sim: FirmwareSim): InjectionSite {
  return { name: 'the firmware rig (the board is the real firmware)', arm: sim.plant, board: { reset: () => sim.reset() } };
}

/** How the firmware rig's process ended: the code it reported before exiting (over IPC), its exit code or signal, the signal passed on to it. */
export interface MockProcessEnd {
  reported: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  passed: NodeJS.Signals | undefined;
}

/**
 * The exit code of `twolink rig --firmware` from how its rig process ended, and why when not 0 (one
 * line for stderr). The code the process reported before it exited is the answer: a signal that
 * arrives while node exits (after its handlers are gone) kills it, but it had stopped cleanly by then.
 */
export function mockProcessExit(e: MockProcessEnd): { code: number; why?: string } {
  if (e.reported !== undefined)
    return e.reported === 0
      ? { code: 0 }
      : { code: e.reported, why: `the firmware rig ended with exit code ${e.reported} (its lines above say why)` };
  if (e.signal) {
    return {
      code: 1,
      why: `the firmware rig's process was ended by ${e.signal}${e.passed ? ` (after ${e.passed} was passed on to it)` : ''} before it had stopped the simulator`,
    };
  }
  return e.code === 0
    ? { code: 0 }
    : { code: e.code ?? 1, why: `the firmware rig's process exited with code ${e.code} without saying how it ended` };
}

/** What the rig process reports before it exits. */
const Reported = z.strictObject({ code: z.number().int().min(0).max(255) });

/**
 * Runs the firmware rig in a process of its own (src/mock/firmware-mock-main.ts), with node's default
 * garbage collector: bin/twolink.js sets V8's --single-threaded-gc at run time, and under this
 * process's load (the plant answers 4000 slices a second) node 20 then aborts in a concurrent-marking
 * check within seconds. stdout and stderr are the child's (`o.log`, `o.out` and `o.report` are not
 * called: with `o.report` given, the child writes report lines).
 *
 * The first SIGINT/SIGTERM is passed on, once; the child is in a process group of its own, so that a
 * Ctrl-C reaches it only that way. (It was in this one: a Ctrl-C reached it from the terminal, and
 * again from here when this process, at normal priority under six CPU hogs, got round to passing it
 * on after the child, at real-time priority, had stopped; that second SIGINT came while node was
 * exiting, after its handlers were gone, and killed it: exit 1 after a clean stop.) The child reports
 * its exit code over IPC before it exits, so a signal in its last moments cannot change the answer.
 */
export function serveFirmwareMock(rig: MockPart, o: FirmwareMockOptions): Promise<number> {
  const main = fileURLToPath(new URL('./firmware-mock-main.js', import.meta.url));
  const args = JSON.stringify({
    rigFile: rig.file,
    board: o.board,
    elf: o.elf,
    injections: o.injections,
    sliceUs: o.sliceUs,
    rt: o.rt,
    report: o.report !== undefined,
  });
  // The handlers first: a signal while the child is being spawned is passed on once it is.
  const to: { child?: ChildProcess } = {};
  let passed: NodeJS.Signals | undefined;
  const pass = (sig: NodeJS.Signals) => (): void => {
    if (passed) return;
    passed = sig;
    to.child?.kill(sig);
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, pass(sig));
  // Tied (tied.ts): the rig process, and with it the simulator, ends with this one, even on SIGKILL.
  const child = spawnTied(process.execPath, [main, args], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], detached: true });
  to.child = child;
  if (passed) child.kill(passed);
  let reported: number | undefined;
  child.on('message', (m) => {
    const r = Reported.safeParse(m);
    if (r.success) reported = r.data.code;
  });
  return new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      const end = mockProcessExit({ reported, code, signal, passed });
      if (end.why) process.stderr.write(`twolink rig: ${end.why}\n`);
      resolve(end.code);
    }),
  );
}

/**
 * SIGINT, SIGTERM and SIGHUP from the firmware process's start (its parent passes them on): one that
 * comes while the simulator is built and started stops it as soon as it is there, so nothing started
 * outlives this process. `fn` is called at each signal (a Ctrl-C reaches this process twice: from the
 * terminal and from the parent), at once for one that came before.
 */
function quitSignals(): { then(fn: () => void): void } {
  let came = false;
  let on: (() => void) | undefined;
  const hit = (): void => {
    came = true;
    on?.();
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, hit);
  return {
    then: (fn) => {
      on = fn;
      if (came) fn();
    },
  };
}

/** Runs the firmware rig here until SIGINT/SIGTERM/SIGHUP or until the harness ends; resolves with the exit code. */
export async function runFirmwareMock(rig: MockPart, o: FirmwareMockOptions): Promise<number> {
  // --rt before the simulator starts: the harness then inherits SCHED_FIFO from its first slice. Asked
  // for after (as it was), the harness paced its first slices at normal priority and, under six CPU
  // hogs, started 100 ms behind the wall clock and skipped ahead (the realtime bench's heavy row said
  // "rig behind at most 108 ms" for the stock image, all of it before any host had opened the port).
  const signals = quitSignals(); // before anything is started
  const own: RtResult | undefined = o.rt ? await requestRealtimeProcess(44) : undefined;
  const mine = own?.granted ? await requestRealtime(threadId(), 44) : own;
  const sim = await FirmwareSim.start({
    rig,
    board: o.board,
    ...(o.elf !== undefined ? { elf: o.elf } : {}),
    ...(o.sliceUs ? { sliceUs: o.sliceUs } : {}),
  });
  // Before the path is printed: a host may connect, and a Ctrl-C come, while the rest is set up.
  const ended = new Promise<FirmwareSimSummary>((resolve) => {
    // Ctrl-C reaches this process twice (from the terminal and from the parent): one stop.
    let quitting = false;
    signals.then(() => {
      if (!quitting) void sim.stop().then(resolve);
      quitting = true;
    });
    sim.once('exit', resolve);
  });
  injectFromHostHandshake(sim, o);
  if (o.report) o.report({ kind: 'pty', host: sim.ptyPath });
  else o.out(sim.ptyPath);
  if (mine) {
    // This process steps the plant in lock-step with the harness: a plant that starves holds the board
    // up as surely as a starved harness (the harness's 10 ms lead covers only short pauses). It runs
    // with V8's default GC (see serveFirmwareMock). The harness (the board) one above it.
    const r = mine.granted ? await requestRealtime(sim.pid, 45) : mine;
    o.log(
      r.granted
        ? 'twolink rig: real-time scheduling (SCHED_FIFO) for the simulator and its plant'
        : noRealtimeLine('twolink rig', `refused: ${r.reason}`),
    );
  } else o.log(noRealtimeLine('twolink rig', 'not asked for: --no-rt'));
  o.log(
    `twolink rig: ${rig.name}: ${o.elf !== undefined ? `the image ${o.elf} (${o.board})` : `the twolink firmware (${o.board}, cpr ${rig.encoders.map((e) => e.countsPerRev).join(',')})`} in simavr on ${sim.ptyPath}, ` +
      `${rig.link.baudRate} baud on the firmware's side; the plant steps in lock-step with it`,
  );
  o.report?.({ kind: 'serving', board: sim.ptyPath });
  logBoardEvents(sim, o);
  const summary = await ended;
  const { boardS, wallS, maxBehindMs, restarts, code } = summary;
  o.report?.({ kind: 'firmware-end', boardS, wallS, maxBehindMs, restarts, code, pins: sim.encoderStatsDeg() });
  o.log(
    summary.wallS > 0
      ? `twolink rig: ${summary.boardS.toFixed(3)} s of board time in ${summary.wallS.toFixed(3)} s; ` +
          `behind the wall clock at most ${summary.maxBehindMs.toFixed(1)} ms${summary.restarts ? `, ${summary.restarts} times over 100 ms (skipped)` : ''}`
      : `twolink rig: the simulator ended (exit code ${summary.code}) without its totals, after ${summary.boardS.toFixed(3)} s of board time`,
  );
  if (summary.code === 0 || summary.code === null) return 0;
  o.log(`twolink rig: the simulator harness exited with code ${summary.code}`);
  return 1;
}

/**
 * The rig's injections on the board's time, counted from the host's first handshake request as it
 * reaches the AVR (the harness's K line), not from the board's start: a host that connects late meets
 * each its time into its session. Each applied is said on stderr and (--report) as a report.
 */
function injectFromHostHandshake(sim: FirmwareSim, o: FirmwareMockOptions): void {
  const site = firmwareSite(sim);
  const inject = injectionSchedule(
    o.injections.filter((i) => {
      const why = refusal(site, i.name);
      if (why) o.log(`twolink rig: injection ${i.name} is not available with --firmware: ${why}`);
      return !why;
    }),
    (i, t) => {
      const r = applyInjection(site, i);
      o.log(
        r.ok
          ? `twolink rig: injected ${formatInjection(i)} at board time ${t.toFixed(4)} s from the host's handshake`
          : `twolink rig: ${r.why}`,
      );
      if (r.ok)
        o.report?.({ kind: 'injected', injection: formatInjection(i), at: i.at, plantS: t, wallS: (performance.now() - wall0) / 1000 });
    },
  );
  // Their times count from the host's first handshake request (the harness's K line), not the board's start.
  let zero: number | undefined;
  let wall0 = 0;
  sim.once('handshake', (e) => {
    zero = e.boardTime;
    wall0 = performance.now();
    if (inject.pending.length > 0)
      o.log(`twolink rig: the host's handshake came at board time ${e.boardTime.toFixed(3)} s; the injections' times count from here`);
    o.report?.({ kind: 'handshake', monoMs: Number(process.hrtime.bigint()) / 1e6 });
  });
  sim.on('slice', (s) => {
    if (zero !== undefined) inject(s.boardTime - zero);
  });
}

/** What happens on the board side, one line each for people: the watchdog zeroing the motors, hosts, lag, resets. */
function logBoardEvents(sim: FirmwareSim, o: Pick<FirmwareMockOptions, 'elf' | 'log'>): void {
  sim.on('outputs-off', (e) => {
    // Only when the host had been silent: an answer to a stop is the host's doing, not the watchdog's.
    // Firmata (an image given with elf) has no line ends: its silence is from the host's last byte.
    const [since, what] = o.elf !== undefined ? [e.sinceByteS, 'byte'] : [e.sinceLineS, 'line'];
    if (since > 0.005) {
      o.log(
        `twolink rig: the firmware zeroed the motor outputs at board time ${e.boardTime.toFixed(6)} s, ${(since * 1e3).toFixed(3)} ms after the last ${what} from the host`,
      );
    }
  });
  sim.on('host', (e) =>
    o.log(
      e.open
        ? `twolink rig: a host opened the port at board time ${e.boardTime.toFixed(3)} s (${e.discardedBytes} bytes the board sent while the port was closed were discarded)`
        : `twolink rig: the host closed the port at board time ${e.boardTime.toFixed(3)} s; what the board sends is discarded until a host opens it`,
    ),
  );
  // The harness says how far behind the wall clock each episode took it (its peak): in the rig's words too.
  sim.on('behind', (e) => {
    if (e.behindS * 1000 >= RIG_STARVED_MS) o.log(starvedLine(e.behindS * 1000, e.boardTime));
  });
  sim.on('reset', (e) => o.log(`twolink rig: the AVR was reset at board time ${e.boardTime.toFixed(3)} s`));
  sim.on('log', (line) => o.log(line));
}
