/**
 * Where a HIL scenario runs. `virtualEngine`: the real loop against the in-process mock rig in
 * virtual time (deterministic, faster than real time). `realtimeEngine`: the mock rig in a process of
 * its own on a pty (`twolink rig --pty`), driven by the loop in real time over that serial line, as a
 * board on a USB cable would be.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { virtualRun } from '../run/virtual.js';
import { Session } from '../run/session.js';
import { stopOnCrash } from '../run/crash.js';
import type { LoopCore, LoopEvent } from '../control/loop.js';
import { F } from '../telemetry/tick.js';
import type { LineMock } from '../mock/line-mock.js';
import type { FirmataMock } from '../mock/firmata-mock.js';
import type { VirtualClock } from '../time/clock.js';
import { STOPPING } from './expect.js';
import { actsOn, formatInjection, type Injection } from '../mock/injections.js';
import { parseMockReport, type MockReport } from '../mock/mock-report.js';
import { firstInjectionAt, type Engine, type EngineResult } from './run.js';
import type { Scenario } from './suite.js';

/**
 * The scenario against the in-process mock rig in virtual time. With injections, "stopped" is
 * measured on the mock itself: the first moment, on the virtual clock, at which the plant's motors get
 * zero duty after the first injection (a probe every 0.5 ms of virtual time). That is what a safety check
 * wants, whoever stops the motors: the host's zero command, or the board's watchdog.
 */
export const virtualEngine: Engine = async (s) => {
  // The probe costs virtual-time steps: only when the scenario asks how fast the arm stopped.
  const at = s.expect.stopWithinMs !== undefined ? firstInjectionAt(s) : undefined;
  let injectedT: number | undefined; // [s, virtual host clock]
  let stopT: number | undefined;
  let armed = false;
  const onTick = (core: LoopCore, clock: VirtualClock, mock: LineMock | FirmataMock): void => {
    if (at === undefined) return;
    if (!armed) {
      armed = true;
      const probe = (): void => {
        if (injectedT !== undefined && mock.plant.duty.every((d) => d === 0)) stopT = clock.now();
        else clock.setTimer(PROBE_S, probe);
      };
      clock.setTimer(PROBE_S, probe);
    }
    // The run applies the injections in the tick whose loop time reaches their time: this one.
    if (injectedT === undefined && core.row[F.t]! >= at) injectedT = clock.now();
  };
  const r = await virtualRun(s.rig, s.paths, {
    feedforward: s.feedforward,
    rateHz: s.rateHz,
    maxSeconds: s.maxSeconds,
    keepRows: false,
    onTick,
    ...(s.controller !== undefined ? { controller: s.controller } : {}),
    ...(s.injections.length ? { injections: s.injections } : {}),
    ...(s.wiring !== undefined ? { wiring: s.wiring } : {}),
  });
  const out: EngineResult = { summary: r.summary, events: r.events };
  if (at !== undefined) out.stopMs = injectedT !== undefined && stopT !== undefined ? (stopT - injectedT) * 1000 : 'never';
  return out;
};

/** Period of the virtual engine's stop probe [s]. */
const PROBE_S = 0.0005;

const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));

/** A `twolink rig --pty --report` child process and the host end of its pty. */
interface PtyRig {
  path: string;
  /** performance.now() when the rig said it serves [ms]. */
  startedMs: number;
  /** performance.now() of the host's handshake, as the rig reports it (its monotonic time) [ms]: its injection times count from here. */
  handshakeMs?: number;
  /** The injections the rig said it cannot take (its `refused` reports), before it served. */
  refused: Extract<MockReport, { kind: 'refused' }>[];
  /** The injections it applied (its `injected` reports, as they arrive), on its arm's time and its wall's since `handshakeMs`. */
  injected: Extract<MockReport, { kind: 'injected' }>[];
  /** Its stderr (words for people: quoted in errors, never parsed). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts the pty rig with `--report`: its stdout is JSON lines (mock/mock-report.ts), read with the
 * schema: the host's end of the pty, the injections it refuses, and `serving` once its end is open
 * (the host must not talk to a closed pty), then `handshake` (the zero of its injections' times) and
 * each injection it applies.
 */
function startPtyRig(s: Scenario, injections: readonly Injection[], rt: boolean): Promise<PtyRig> {
  // The rig asks for SCHED_FIFO by default; it gets the host's choice: a rig at real-time priority beside
  // a starved host (or the reverse) is not the bench a user has.
  const args = [BIN, 'rig', '--rig', s.rig.file, '--pty', '--report', ...(rt ? [] : ['--no-rt'])];
  for (const i of injections) args.push('--inject', formatInjection(i));
  if (s.wiring !== undefined) args.push('--wiring', s.wiring.spec);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let path: string | undefined;
  const refused: PtyRig['refused'] = [];
  const injected: PtyRig['injected'] = [];
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  const rig: PtyRig = { path: '', startedMs: 0, refused, injected, stderr: () => err, stop };
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`twolink rig exited (${code}) before serving: ${err.trim().split('\n').at(-1) ?? ''}`)));
    const fail = (e: unknown): void => {
      void stop();
      reject(e instanceof Error ? e : new Error(String(e)));
    };
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const r = parseMockReport(line);
        if (r.kind === 'pty') path = r.host;
        else if (r.kind === 'refused') refused.push(r);
        else if (r.kind === 'serving') {
          if (path === undefined) throw new Error(`twolink rig --report: it serves on ${r.board} before it said the host's end of its pty`);
          rig.path = path;
          rig.startedMs = performance.now();
          resolve(rig);
        } else if (r.kind === 'handshake') rig.handshakeMs = r.monoMs - (Number(process.hrtime.bigint()) / 1e6 - performance.now());
        else if (r.kind === 'injected') injected.push(r);
      } catch (e) {
        fail(e);
      }
    });
  });
}

/**
 * When the scenario's first injection happened on this host's wall clock [ms, performance.now()]: one the
 * rig applied, when it says it did (its `injected` report: its wall time since the host's handshake; a
 * starved rig applies it late, on its arm's time); one on the host's loop thread (busy, throw), or one the
 * rig has not reported, the handshake plus its time (the rig's start plus it if no handshake was reported).
 */
export function injectionWallMs(
  injections: readonly Injection[],
  rig: Pick<PtyRig, 'startedMs' | 'handshakeMs' | 'injected'>,
  at: number,
): number {
  const first = injections.find((i) => i.at === at);
  const report = first && actsOn(first.name) !== 'host' ? rig.injected.find((r) => r.injection === formatInjection(first)) : undefined;
  return (rig.handshakeMs ?? rig.startedMs) + (report ? report.wallS : at) * 1000;
}

/**
 * The scenario against the pty rig in real time. With injections, "stopped" is measured on this
 * host's wall clock: from the injection (injectionWallMs: when the rig says it applied it, on its
 * simulated arm's time from the host's handshake, which a starved rig lets fall behind the wall's; those
 * on the host's loop thread, busy and throw, at the handshake plus their time) to the arrival of the loop's first event saying it
 * stopped tracking (the motors are at zero by then, or a watchdog period later). The handshake is on the
 * machine's monotonic clock, as the rig reports it.
 */
export function realtimeEngine(opts: { rt?: boolean } = {}): Engine {
  return (s) => runRealtime(s, opts.rt !== false);
}

async function runRealtime(s: Scenario, rt: boolean): Promise<EngineResult> {
  const onHost = s.injections.filter((i) => actsOn(i.name) === 'host');
  const rig = await startPtyRig(
    s,
    s.injections.filter((i) => actsOn(i.name) !== 'host'),
    rt,
  );
  const events: LoopEvent[] = [];
  const at = firstInjectionAt(s);
  const stopping: number[] = []; // performance.now() of the loop's events saying it stopped tracking [ms]
  try {
    // The pty rig skips (and reports, before it serves) the injections it cannot take: the scenario would not run as written.
    const skipped = rig.refused[0];
    if (skipped)
      throw new Error(`injection ${skipped.injection} is not available on the pty rig: ${skipped.why}: run this scenario in virtual time`);
    const session = new Session({
      rig: s.rig,
      target: { kind: 'port', path: rig.path },
      paths: s.paths,
      cycle: false,
      park: true,
      feedforward: s.feedforward,
      rateHz: s.rateHz,
      injections: onHost,
      maxSeconds: s.maxSeconds,
      ...(rt ? { rt } : {}),
      ...(s.controller !== undefined ? { controller: s.controller } : {}),
      onEvent: (e) => {
        events.push(e);
        if (e.kind === 'state' && STOPPING.has(e.state)) stopping.push(performance.now());
      },
    });
    const offCrash = stopOnCrash(session); // a bug of twolink's on this thread: fault:internal (docs/safety.md)
    const r = await session.run().finally(offCrash);
    // (A controller's fault while loading is the run's stop reason, like one in a tick.)
    if (r.error && r.error.name !== 'ControllerFault' && r.summary.ticks === 0)
      throw new Error(`${r.error.message}${rig.stderr() ? ` (rig: ${rig.stderr().trim().split('\n').at(-1)})` : ''}`);
    const result: EngineResult = { summary: r.summary, events };
    if (at !== undefined) {
      const injectedMs = injectionWallMs(s.injections, rig, at);
      const stoppedMs = stopping.find((t) => t >= injectedMs);
      result.stopMs = stoppedMs === undefined ? 'never' : stoppedMs - injectedMs;
    }
    return result;
  } finally {
    await rig.stop();
  }
}
