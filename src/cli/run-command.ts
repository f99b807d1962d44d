/**
 * `twolink run` and `twolink demo`: drive the arm (or the mock rig) along trajectories with the loop
 * in a worker thread, record, and print a summary (or show the dashboard on a terminal).
 */
import { adapterName, cableAdvice, cableWarning, runCable } from '../config/cable.js';
import { loadRig, type Rig } from '../config/load.js';
import { formatInjection } from '../mock/injections.js';
import { describeEvent } from '../control/events.js';
import { describeStop, type StopReason } from '../control/stop.js';
import { Session, type SessionOptions, type SessionResult } from '../run/session.js';
import { armTestCrash, stopOnCrash, testCrashPlan } from '../run/crash.js';
import { ControllerError, ControllerFault } from '../control/user-controller.js';
import { controllerDeadlineMs, loadControlLaw } from '../run/law.js';
import { RunStats } from '../run/stats.js';
import { noRealtimeLine } from '../time/threads.js';
import { builtinNames, builtinPath } from '../model/builtins.js';
import type { FloatSettings } from '../control/float.js';
import { humanSummary } from './run-summary-text.js';
import { DEMO_OPTIONS, plan, RUN_OPTIONS, type Plan, type RunArgs } from './run-plan.js';

export { lateText, phaseLines, replayLine, trackingLine } from './run-summary-text.js';
import { formatHelp, noPositionals, numberArg, parse, UsageError } from './args.js';
import { injectHelp } from './inject-arg.js';
import { wiringHelp } from './wiring-arg.js';
import { FOXGLOVE_PORT, foxgloveArgv, withLiveView } from './foxglove-arg.js';
import type { LiveView } from '../viz/live-view.js';
import { reconnectOptions } from './reconnect-arg.js';

/** The exit code of a run that ended with `stop` (docs/running.md "The summary", `twolink run --help`). */
export function exitCodeOf(stop: StopReason): number {
  switch (stop.kind) {
    case 'done':
    case 'quit': // the dashboard's q: a normal end, like `done`
      return 0;
    case 'interrupted':
      return 130;
    case 'timeout':
      return 4;
    case 'requested':
    case 'estop':
    case 'fault':
      return 1;
  }
}

/** Loads the run's controller in its thread and ends it: a ControllerError (bad module) is thrown, a fault is returned. */
async function checkController(p: Plan): Promise<ControllerFault | undefined> {
  try {
    await (await loadControlLaw(p.controller!, p.rig, p.rateHz, { deadlineMs: controllerDeadlineMs(p.rig, 'real') })).close();
    return undefined;
  } catch (e) {
    if (e instanceof ControllerFault) return e;
    throw e;
  }
}

/**
 * What is checked just before the run: injections due after its end (refused), and the controller,
 * loaded in its own thread so that a bad module is one line and exit code 2 before anything moves,
 * and one that hangs or misbehaves while loading is a stop (its summary printed): exit code 1.
 */
async function preflight(p: Plan, v: RunArgs, maxSeconds: number): Promise<number | undefined> {
  for (const i of p.injections) {
    if (i.at >= maxSeconds)
      throw new UsageError(
        `--inject ${formatInjection(i)}: due at ${i.at} s, after the run's end (--max-seconds ${maxSeconds}): it would never happen`,
      );
  }
  const fault = p.controller !== undefined ? await checkController(p) : undefined;
  if (!fault) return undefined;
  const summary = new RunStats(p.rig.joints, p.rateHz).summary(fault.stop);
  process.stdout.write(`${v.json ? JSON.stringify(summary) : humanSummary(summary, cableOf(p).name)}\n`);
  process.stderr.write(`twolink: ${fault.message} (nothing moved)\n`);
  return 1;
}

/** The injections a run ended before, one warning each; a controller module that failed to load in the loop's thread is an input error. */
function afterRun(result: SessionResult, rateHz: number): void {
  for (const i of result.unapplied ?? []) {
    process.stderr.write(
      `twolink: WARNING: --inject ${formatInjection(i)} never happened: the run ended (at ${(result.summary.ticks / rateHz).toFixed(2)} s) before ${i.at} s\n`,
    );
  }
  if (result.error?.name === 'ControllerError') throw new ControllerError(result.error.message);
}

/**
 * The cable of the run and the answer delay to expect from it (src/config/cable.ts); one WARNING line
 * at start-up when the rate asks more than it carries (also with --json), and `say` the cable.
 */
function cableOf(
  p: Plan,
  say?: (s: string) => void,
): { adapter: string; latencyMs: number; name: string; expectedAnswerDelaySamples: number } {
  const c = runCable(p.rig, p.target.kind === 'mock');
  const line = cableWarning(c.kind, c.latencyMs, p.rateHz);
  if (line) process.stderr.write(`twolink: WARNING: ${line}\n`);
  const expected = cableAdvice(c.kind, c.latencyMs, p.rateHz).answerDelaySamples;
  const name = adapterName(c.kind, c.latencyMs);
  say?.(
    `cable: ${name}${p.target.kind === 'mock' ? " (the mock's model)" : ''}: answers expected ~${expected} sample(s) after their sample at ${p.rateHz} Hz`,
  );
  return { adapter: c.kind, latencyMs: c.latencyMs, name, expectedAnswerDelaySamples: expected };
}

/** The signals that stop the arm softly (a second e-stops). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** SIGUSR1 pauses the trajectory (the arm holds where the plan is) and resumes it. Returns the listener (to take off). */
function pauseOnSignal(session: Session, log: (s: string) => void): () => void {
  let paused = false;
  const onPause = (): void => {
    paused = !paused;
    session.send({ kind: paused ? 'pause' : 'resume' });
    log(paused ? 'SIGUSR1: paused (again to resume)' : 'SIGUSR1: resumed');
  };
  process.on('SIGUSR1', onPause);
  return onPause;
}

/** The law of the run, when not twolink's feedforward + PID: the user's controller or float mode. */
function lawOf(p: Plan): { controller?: string; float?: FloatSettings } {
  return { ...(p.controller !== undefined ? { controller: p.controller } : {}), ...(p.float ? { float: p.float } : {}) };
}

/** The run's law for its first line: feedforward + PID in short, another law as compare labels it (the recording's header names the same). */
async function lawWords(p: Plan): Promise<string> {
  if (p.controller === undefined && !p.float && !p.impedance)
    return ` (${p.feedforward === 'none' ? 'PID alone' : `feedforward: ${p.feedforward} + PID`})`;
  const [{ runLaw }, { lawText }] = await Promise.all([import('../run/header.js'), import('../record/compare.js')]);
  return `, law: ${lawText(runLaw({ rig: p.rig, feedforward: p.feedforward, ...lawOf(p), ...(p.impedance ? { impedance: p.impedance } : {}) }))}`;
}

/** The dashboard as far as notices go. */
interface Notices {
  stop(): void;
  say?(text: string, level?: 'warn'): void;
}

/**
 * Without real-time priority: one line at start-up; under the dashboard a notice on it, and the line
 * after the run (stderr written under a full-screen dashboard lands in the middle of its picture).
 */
function realtimeWarning(interactive: boolean): { warn(why: string): void; attach(d: Notices): void; flush(): void } {
  let later: string | undefined;
  let dash: Notices | undefined;
  const notice = (): void => dash?.say?.('no real-time priority: a busy machine may stop the arm (see the line after the run)', 'warn');
  return {
    warn: (why) => {
      const line = noRealtimeLine('twolink', why);
      if (!interactive) process.stderr.write(`${line}\n`);
      else {
        later = line;
        notice();
      }
    },
    attach: (d) => {
      dash = d;
      if (later) notice();
    },
    flush: () => {
      if (later) process.stderr.write(`${later}\n`);
    },
  };
}

/**
 * `--record FILE`: NDJSON, or for FILE.mcap the MCAP writer of compare --export mcap (record/mcap.ts)
 * fed as the rows are drained; `done` waits for the MCAP file to be complete.
 */
async function recordingOption(
  v: RunArgs,
  rig: Rig,
): Promise<{ options: Pick<SessionOptions, 'record' | 'recorder'>; done(): Promise<void> }> {
  if (typeof v.record !== 'string') return { options: {}, done: async () => undefined };
  if (!v.record.endsWith('.mcap')) return { options: { record: v.record }, done: async () => undefined };
  const mcap = new (await import('../record/mcap.js')).McapRecorder(v.record, rig);
  return {
    options: { recorder: mcap },
    done: async () => {
      await mcap.done;
      if (mcap.failure) process.stderr.write(`twolink: the MCAP recording failed: ${mcap.failure.message}\n`);
    },
  };
}

/**
 * A bug of twolink's during the run, on this thread (the live view, the dashboard, the recorder) or in
 * the live view's own thread, stops the arm: fault:internal (run/crash.ts). Returns what takes the
 * handlers off.
 */
function guardCrashes(session: Session, live: LiveView | undefined): () => void {
  if (live?.placement === 'thread') live.onFailure = (e) => void session.crash("the live view's thread", e);
  return stopOnCrash(session);
}

/** The test-only hook TWOLINK_TEST_CRASH (run/crash.ts, docs/safety.md), checked before anything moves. */
function crashTestArg(): ReturnType<typeof testCrashPlan> {
  try {
    return testCrashPlan();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** How a run talks: on a terminal with the dashboard (`interactive`), as JSON (`quiet`), or in lines on stderr (`log`). */
interface RunVoice {
  interactive: boolean;
  quiet: boolean;
  log: (s: string) => void;
}

async function execute(p: Plan, v: RunArgs, opts: { cycle: boolean; maxSeconds: number; demo: boolean }, live?: LiveView): Promise<number> {
  const stopped = await preflight(p, v, opts.maxSeconds);
  if (stopped !== undefined) return stopped;
  const crashTest = crashTestArg();
  const interactive = process.stdout.isTTY === true && !v.headless && !v.json;
  const quiet = v.json === true;
  const voice: RunVoice = { interactive, quiet, log: (s) => void (interactive || process.stderr.write(`${s}\n`)) };
  const { log } = voice;
  let dashboard: Notices | undefined;
  const rtWarning = realtimeWarning(interactive);
  const recording = await recordingOption(v, p.rig);
  const session = await sessionOf(p, v, opts, live, {
    voice,
    rtWarning,
    recording: recording.options,
    crashTest,
    dashboard: () => dashboard,
  });
  const offCrash = guardCrashes(session, live);
  live?.attach(session.ringBuffers);
  if (v['no-rt'] === true) rtWarning.warn('not asked for: --no-rt');
  const requestStop = stopRequests(session, voice);
  const onSignal = (sig: NodeJS.Signals): void => requestStop({ kind: 'interrupted', signal: sig });
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  const offPause = pauseOnSignal(session, quiet ? () => undefined : log);
  const cable = cableOf(p, quiet ? undefined : log);
  if (interactive) {
    const { startDashboard } = await import('../tui/dashboard.js');
    dashboard = startDashboard({ session, rig: p.rig, paths: p.paths, demo: opts.demo, onQuit: requestStop });
    rtWarning.attach(dashboard);
  } else if (!quiet) {
    log(
      `twolink ${opts.demo ? 'demo' : 'run'}: ${p.paths.map((x) => x.name).join(', ')} on ${p.rig.name} at ${p.rateHz} Hz${await lawWords(p)}`,
    );
  }
  const result = await session.run().finally(() => recording.done());
  offCrash();
  dashboard?.stop();
  rtWarning.flush();
  for (const sig of [...STOP_SIGNALS, 'SIGUSR1']) process.off(sig, sig === 'SIGUSR1' ? offPause : onSignal);
  afterRun(result, p.rateHz);
  return reportRun(result, v, cable, p.float !== undefined, () =>
    log(`recorded ${session.recorder?.ticks ?? 0} ticks to ${String(v.record)}`),
  );
}

/** The run's session, with what it says on the way: real-time priority, events, the board's identity. */
async function sessionOf(
  p: Plan,
  v: RunArgs,
  opts: { cycle: boolean; maxSeconds: number },
  live: LiveView | undefined,
  hooks: {
    voice: RunVoice;
    rtWarning: ReturnType<typeof realtimeWarning>;
    recording: Pick<SessionOptions, 'record' | 'recorder'>;
    crashTest: ReturnType<typeof testCrashPlan>;
    dashboard: () => Notices | undefined;
  },
): Promise<Session> {
  const { voice, rtWarning, crashTest } = hooks;
  const { interactive, quiet, log } = voice;
  const session: Session = new Session({
    ...(await reconnectOptions(v, p.target, interactive, hooks.dashboard)),
    // The live view's thread reads the loop's ring itself, at normal priority (--rt or not).
    ...(live && live.tid > 0 ? { normalTids: [live.tid] } : {}),
    ...(live?.placement === 'main' ? { onDrained: () => live.poll() } : {}),
    rig: p.rig,
    target: p.target,
    paths: p.paths,
    cycle: opts.cycle,
    park: !v['no-park'],
    feedforward: p.feedforward,
    rateHz: p.rateHz,
    injections: p.injections,
    ...lawOf(p),
    ...(p.impedance ? { impedance: p.impedance } : {}),
    maxSeconds: opts.maxSeconds,
    rt: v['no-rt'] !== true,
    ...(v['no-delay-compensation'] ? { predict: false } : {}),
    onRealtime: (granted, reason, what) => {
      if (granted)
        log(
          what
            ? `priority: ${what} for the loop's process (${process.platform}: the best a user gets without admin rights)`
            : 'real-time scheduling: SCHED_FIFO granted to the loop thread',
        );
      else rtWarning.warn(`refused: ${reason ?? 'unknown'}`);
    },
    ...hooks.recording,
    onEvent: (e) => {
      const s = describeEvent(e);
      if (s && !quiet) log(s);
    },
    onReady: (d, identity) => {
      if (!quiet) log(`connected: ${d}`);
      // What the board lacks (stock Firmata: no watchdog) is said at start-up, also with --json (stderr).
      if (!interactive) for (const w of identity.warnings ?? []) process.stderr.write(`twolink: WARNING: ${w}\n`);
      if (crashTest && crashTest.thread !== 'loop') armTestCrash(crashTest, session);
    },
  });
  return session;
}

/**
 * What stops the run on request (a signal, or the dashboard's `quit`): the first request stops softly
 * with its reason; a second e-stops.
 */
function stopRequests(session: Session, voice: RunVoice): (reason: StopReason) => void {
  let interrupts = 0;
  return (reason) => {
    interrupts++;
    const by = reason.kind === 'interrupted' ? (reason.signal ?? 'signal') : reason.kind;
    // stopNow: if the loop's thread is blocked and does not answer, the main thread ends it.
    if (interrupts === 1) {
      if (!voice.quiet) voice.log(`${reason.kind === 'interrupted' ? by : describeStop(reason)}: stopping softly (again to e-stop)`);
      session.stopNow({ kind: 'stop', reason });
    } else {
      session.stopNow({ kind: 'estop', reason: { kind: 'estop', by } });
    }
  };
}

/** The run's summary on stdout (JSON or for people), its error on stderr, and the exit code of its stop. */
function reportRun(
  result: Awaited<ReturnType<Session['run']>>,
  v: RunArgs,
  cable: ReturnType<typeof cableOf>,
  floating: boolean,
  logRecorded: () => void,
): number {
  if (result.error && result.error.name === 'LinkError') {
    process.stderr.write(`twolink: ${result.error.message}\n`);
    if (v.json) process.stdout.write(`${JSON.stringify(result.summary)}\n`);
    return 3;
  }
  if (v.json) process.stdout.write(`${JSON.stringify({ ...result.summary, cable })}\n`);
  else process.stdout.write(`${humanSummary(result.summary, cable.name, floating)}\n`);
  if (typeof v.record === 'string') logRecorded();
  if (result.error) process.stderr.write(`twolink: ${result.error.message}\n`);
  return exitCodeOf(result.summary.stop);
}

export async function runCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(foxgloveArgv(argv, FOXGLOVE_PORT), RUN_OPTIONS, 'run');
  noPositionals(positionals, 'run', 'give the trajectory with --traj and the rig with --rig');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'run',
        'drive the arm along trajectories: inverse-dynamics feedforward + PID at a fixed rate, with the twin and a recording',
        'run --rig F [--port PATH | --mock] [--traj NAME|FILE]... [--rate HZ] [--record out.ndjson|out.mcap] [--no-feedforward] [--rt] [--headless] [--json]',
        RUN_OPTIONS,
        `Examples:\n  twolink run --rig rigs/mock-arm.json --mock --traj reach --json\n  twolink run --rig rigs/bench-arm.json --port /dev/ttyACM0 --traj circle --record circle.ndjson\n\n${injectHelp()}\n\n${wiringHelp()}\n\nExit codes: 0 done (or quit with q), 1 stopped by a fault (or an e-stop), 2 bad input, 3 connection problem, 4 timeout (--max-seconds came before the trajectories were done), 130 interrupted.`,
      ),
    );
    return 0;
  }
  const maxSeconds = numberArg(v['max-seconds'], 'max-seconds', { default: 600, min: 0.1, unit: 's' });
  const p = plan(v, maxSeconds);
  return withLiveView(v, p.rig, (live) => execute(p, v, { cycle: v.cycle === true, maxSeconds, demo: false }, live));
}

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const parsed = parse(foxgloveArgv(argv, FOXGLOVE_PORT), DEMO_OPTIONS, 'demo');
  const v: RunArgs = parsed.values;
  const positionals = parsed.positionals;
  noPositionals(positionals, 'demo', 'give trajectories with --traj');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'demo',
        'the whole stack on the built-in simulated rig (rigs/mock-arm.json), in real time, no hardware: it cycles through the built-in trajectories; on a terminal with the dashboard, otherwise once through with a summary',
        'demo [--rig rigs/mock-arm.json] [--headless] [--json] [--record demo.ndjson]',
        DEMO_OPTIONS,
      ),
    );
    return 0;
  }
  const rigFile = typeof v.rig === 'string' ? v.rig : 'rigs/mock-arm.json';
  const interactive = process.stdout.isTTY === true && !v.headless && !v.json;
  // With the dashboard or a live view someone is watching: cycle until quit (a headless run with
  // --foxglove that ended after one pass left no time to connect Foxglove).
  const watched = interactive || v.foxglove !== undefined;
  const rig = loadRig(rigFile);
  const names = v.traj ?? builtinNames(rig.arm);
  for (const n of names) if (!builtinPath(rig.arm, n) && !n.endsWith('.json')) throw new UsageError(`unknown trajectory "${n}"`);
  const maxSeconds = numberArg(v['max-seconds'], 'max-seconds', { default: watched ? 24 * 3600 : 600, min: 0.1, unit: 's' });
  const cycle = watched || v.cycle === true;
  if (cycle && !interactive)
    process.stderr.write(
      `twolink demo: cycling through ${names.join(', ')} until Ctrl-C${v['max-seconds'] !== undefined ? ` or ${maxSeconds} s` : ''}\n`,
    );
  const p = plan({ ...v, rig: rigFile, mock: true, traj: names }, maxSeconds, rigFile, names);
  return withLiveView(v, p.rig, (live) => execute(p, v, { cycle, maxSeconds, demo: true }, live));
}

/** `twolink replay FILE [run options]`: `twolink run --traj FILE` with the rest of the options. */
export async function replayCommand(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(
      'usage: twolink replay FILE --rig F (--port PATH | --mock) [--speed 0.25..2] [run options]: twolink run --traj FILE; see twolink run --help\n',
    );
    return 0;
  }
  const file = argv[0];
  if (file === undefined || file.startsWith('-') || argv.includes('--traj'))
    throw new UsageError('give the taught trajectory file first: twolink replay demo.json --rig F (--port PATH | --mock)');
  return runCommand(['--traj', file, ...argv.slice(1)]);
}
