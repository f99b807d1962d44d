/**
 * The Firmata path's figures, beside the line protocol's: the wire budget of a control cycle and the
 * loop rate it allows (computed), the command -> confirmation round trip and the report rate achieved
 * over the in-process Firmata mock in real time (measured), and the seed reach tracked by the real
 * loop over johnny-five in virtual time (deterministic: the UART model, not this machine, sets it; the
 * rows say "virtual time"), with the samples answered late and the reports found lost.
 */
import { loadRig, type Rig } from '../config/load.js';
import { virtualRun } from '../run/virtual.js';
import { builtinPath } from '../model/builtins.js';
import { cycleBudget } from '../protocol/firmata.js';
import type { MotorPins } from '../protocol/firmata-wiring.js';
import type { RunSummary } from '../run/stats.js';
import type { FirmataMock } from '../mock/firmata-mock.js';
import { openLinked } from '../run/compose.js';
import { RealClock, runUntilSettled, VirtualClock, type Clock } from '../time/clock.js';
import type { FirmataLink } from '../transport/firmata-link.js';
import { section, type BenchResult } from './report.js';

export const FIRMATA_RIG = 'rigs/mock-arm-firmata.json';
export const LINE_RIG = 'rigs/mock-arm.json';

/** The line protocol's bus limits, PROTOCOL.md section 7 (typical 44-byte telemetry frame) [Hz]. */
const LINE_LIMIT_HZ: Record<number, number> = { 57600: 130, 115200: 261, 1000000: 2272 };

/** A copy of a rig at another baud rate, loop rate and sampling interval (0 = automatic). */
export function firmataVariant(rig: Rig, baudRate: number, rateHz?: number, samplingIntervalMs?: number): Rig {
  return {
    ...rig,
    link: { ...rig.link, baudRate },
    control: { ...rig.control, ...(rateHz ? { rateHz } : {}) },
    firmata: { ...rig.firmata!, ...(samplingIntervalMs !== undefined ? { samplingIntervalMs } : {}) },
  };
}

/** The loop rate a rig's Firmata wiring sustains at its baud rate: one report per tick. */
export function firmataLoopHz(rig: Rig): number {
  const f = rig.firmata!;
  const enc = f.sensors.filter((s) => s.type === 'encoder').length;
  const motors = f.motors.filter((m): m is MotorPins & { dir: number } => 'pwm' in m);
  const interval =
    f.samplingIntervalMs > 0
      ? f.samplingIntervalMs
      : cycleBudget(motors, enc, f.sensors.length - enc, rig.link.baudRate).samplingIntervalMs;
  return 1000 / interval;
}

export interface ReachResult {
  summary: RunSummary;
  /** Readings the link produced per loop tick. */
  readingsPerTick: number;
  samplingIntervalMs: number;
  /** Samples answered after the next report was due, and reports inferred lost. */
  late: number;
  lost: number;
}

/** The seed reach over johnny-five and the Firmata mock rig, in virtual time (virtualRun: the same path as the HIL suites and twolink/testing). */
export async function firmataReach(rig: Rig, rateHz = rig.control.rateHz): Promise<ReachResult> {
  const r = await virtualRun({ ...rig, control: { ...rig.control, rateHz } }, [builtinPath(rig.arm, 'reach')!], {
    rateHz,
    keepRows: false,
    maxSeconds: 30,
  });
  const link = r.link as FirmataLink;
  return {
    summary: r.summary,
    readingsPerTick: link.readingCount / Math.max(1, r.summary.ticks),
    samplingIntervalMs: link.samplingIntervalMs,
    late: link.counters.late,
    lost: link.counters.lost,
  };
}

/** The seed reach over the line protocol and its mock rig, in virtual time (for comparison). */
export async function lineReach(rig: Rig, rateHz = rig.control.rateHz): Promise<RunSummary> {
  const r = await virtualRun({ ...rig, control: { ...rig.control, rateHz } }, [builtinPath(rig.arm, 'reach')!], {
    rateHz,
    keepRows: false,
    maxSeconds: 30,
  });
  return r.summary;
}

function quantile(xs: number[], q: number): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Lets virtual time run until `p` settles. */
function pump<T>(clock: VirtualClock, p: Promise<T>, stepS = 0.0001): Promise<T> {
  return runUntilSettled(clock, p, { stepS, maxS: 600, maxRealMs: 120_000 });
}

export interface WireFigures {
  /** Command -> confirmation (PWM change, then a pin state query answered with the new value) [ms]. */
  rttMs: number[];
  /** Readings per second the link produced. */
  reportsPerS: number;
  /** Mean age of a report when its last byte left the board [ms] (transmit buffer + wire). */
  reportAgeMs: number;
  /** Fraction of the time the firmware's loop was blocked in Serial.write(). */
  blocked: number;
  samplingIntervalMs: number;
}

/**
 * Round trips and report rate over the in-process mock: in real time (`RealClock`: host software and
 * the emulator share this process, and its timers fire at >= 1 ms) or in virtual time (the UART alone).
 */
export async function measureWire(rig: Rig, real: boolean, seconds = 1.5, samples = 150): Promise<WireFigures> {
  const clock: Clock = real ? new RealClock() : new VirtualClock();
  const virt = real ? undefined : (clock as VirtualClock);
  const run = <T>(p: Promise<T>): Promise<T> => (virt ? pump(virt, p) : p);
  const wait = (s: number): Promise<void> => (virt ? pump(virt, new Promise<void>((r) => virt.setTimer(s, r)), 0.0005) : sleep(s * 1000));
  // The Firmata mock in this thread on `clock` (run/compose.ts).
  const opened = await openLinked(rig, { kind: 'mock' }, clock, { handshakeMs: 10_000, answerMs: 2000 });
  const mock = opened.end.local!.mock as FirmataMock;
  const link = opened.board as FirmataLink;
  try {
    await run(link.open());
    await run(link.enable(true));
    await wait(0.2);
    const st = mock.board.stats;
    const r0 = link.readingCount;
    const b0 = { reports: st.reports, age: st.reportAgeSumS, blocked: st.blockedS };
    const t0 = clock.now();
    await wait(seconds);
    const dt = clock.now() - t0;
    const n = st.reports - b0.reports;
    const figures = {
      reportsPerS: (link.readingCount - r0) / dt,
      reportAgeMs: (1000 * (st.reportAgeSumS - b0.age)) / Math.max(1, n),
      blocked: (st.blockedS - b0.blocked) / dt,
    };
    const rttMs: number[] = [];
    for (let i = 0; i < samples; i++) {
      // small duties, no reversal: one 3-byte analog message per motor, then the query
      const d = 0.05 + 0.05 * (i % 2);
      const t = clock.now();
      link.writeDuty([d, d]);
      const ok = await run(link.confirm(2000));
      if (ok) rttMs.push((clock.now() - t) * 1000);
      await wait(0.003 + 0.001 * (i % 3));
    }
    await run(link.stop(2000));
    return { rttMs, ...figures, samplingIntervalMs: link.samplingIntervalMs };
  } finally {
    const closing = link.close().catch(() => {});
    await (virt ? pump(virt, closing, 0.001) : closing);
    await opened.end.dispose();
  }
}

const ms = (v: number): string => `${v.toFixed(2)} ms`;
const deg = (v: number[]): string => v.map((x) => x.toFixed(3)).join(' / ');

export async function benchFirmata(): Promise<BenchResult> {
  const base = loadRig(FIRMATA_RIG);
  const motors = base.firmata!.motors.filter((m): m is MotorPins & { dir: number } => 'pwm' in m);
  const rows: [string, string, string][] = [];
  const figures: BenchResult['figures'] = {};

  // ---- the budget
  for (const baud of [57600, 115200]) {
    const b = cycleBudget(motors, 2, 0, baud);
    rows.push([
      `budget @ ${baud}: report ${b.upBytes} B up, motors ${b.downBytes} B down (${b.downBytesReversing} B reversing)`,
      `${b.loopHz.toFixed(0)} Hz`,
      `interval ${b.samplingIntervalMs} ms; the wire alone: ${b.busLimitHz.toFixed(0)} Hz; line protocol: ${LINE_LIMIT_HZ[baud]} Hz (PROTOCOL.md s7)`,
    ]);
    figures[`loopHz${baud}`] = b.loopHz;
    figures[`busLimitHz${baud}`] = b.busLimitHz;
  }
  rows.push([
    'line protocol @ 1000000 (its default)',
    `${LINE_LIMIT_HZ[1000000]} Hz`,
    'bus limit, typical frame (PROTOCOL.md s7); the loop runs at 500 Hz',
  ]);

  // ---- round trips and report rates
  const cases: { label: string; rig: Rig; real: boolean }[] = [
    { label: '57600, interval auto', rig: firmataVariant(base, 57600, undefined, 0), real: true },
    { label: '115200, interval auto', rig: firmataVariant(base, 115200, undefined, 0), real: true },
    { label: '57600, interval 1 ms (too fast)', rig: firmataVariant(base, 57600, undefined, 1), real: true },
    { label: '57600, interval auto, UART model only', rig: firmataVariant(base, 57600, undefined, 0), real: false },
    { label: '115200, interval auto, UART model only', rig: firmataVariant(base, 115200, undefined, 0), real: false },
    { label: '57600, interval 1 ms, UART model only', rig: firmataVariant(base, 57600, undefined, 1), real: false },
  ];
  for (const c of cases) {
    const w = await measureWire(c.rig, c.real);
    const key = c.label.replace(/[^a-z0-9]+/gi, '_');
    rows.push([
      `command -> confirmation @ ${c.label}`,
      `p50 ${ms(quantile(w.rttMs, 0.5))}`,
      `p99 ${ms(quantile(w.rttMs, 0.99))} (${w.rttMs.length} samples); reports ${w.reportsPerS.toFixed(0)}/s at ${w.samplingIntervalMs} ms, ` +
        `${w.reportAgeMs.toFixed(1)} ms old when sent, firmware loop blocked ${(w.blocked * 100).toFixed(0)}%`,
    ]);
    figures[`rttP50Ms_${key}`] = quantile(w.rttMs, 0.5);
    figures[`rttP99Ms_${key}`] = quantile(w.rttMs, 0.99);
    figures[`reportsPerS_${key}`] = w.reportsPerS;
    figures[`reportAgeMs_${key}`] = w.reportAgeMs;
    figures[`blocked_${key}`] = w.blocked;
  }

  // ---- tracking: the seed reach with feedforward + PID, virtual time
  const firmata = async (rig: Rig): Promise<{ summary: RunSummary; note: string }> => {
    const r = await firmataReach(rig);
    return { summary: r.summary, note: `; late ${r.late}, lost ${r.lost} reports` };
  };
  const track: { label: string; run: () => Promise<{ summary: RunSummary; note: string }> }[] = [
    { label: 'Firmata 57600, 333 Hz (3 ms reports)', run: () => firmata(firmataVariant(base, 57600, 333, 0)) },
    { label: 'Firmata 115200, 500 Hz (2 ms reports)', run: () => firmata(firmataVariant(base, 115200, 500, 0)) },
    { label: 'Firmata 57600, 333 Hz, 1 ms reports (too fast)', run: () => firmata(firmataVariant(base, 57600, 333, 1)) },
    { label: 'line protocol 1000000, 500 Hz', run: async () => ({ summary: await lineReach(loadRig(LINE_RIG), 500), note: '' }) },
  ];
  for (const t of track) {
    const { summary: s, note } = await t.run();
    const key = t.label.replace(/[^a-z0-9]+/gi, '_');
    rows.push([
      `reach tracking (virtual time), ${t.label}`,
      `${deg(s.tracking.rmsDeg)} deg`,
      `RMS per joint; max ${deg(s.tracking.maxDeg)} deg; ${s.stopReason}, ${s.stopOutcome}${note}`,
    ]);
    figures[`reachRmsDeg_${key}`] = s.tracking.rmsDeg;
    figures[`reachMaxDeg_${key}`] = s.tracking.maxDeg;
  }
  return section('Firmata path (johnny-five over the Firmata mock rig)', rows, figures);
}
