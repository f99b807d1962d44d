/**
 * `twolink doctor (--port P | --mock --rig F [--adapter KIND]) [--json]`: one report of what limits
 * real time on this machine and this cable. The kernel's preemption, SCHED_FIFO and memory locking,
 * the CPU governor (src/cli/doctor-checks.ts); the adapter behind the port from sysfs; a measured
 * round trip with the board (pings on the line protocol: `P seq` -> `A`); the rate and answer delay
 * it recommends. Each check is pass / warn / fail with its evidence and fix, as `twolink setup`'s.
 *
 * On the mock the round trip is measured in VIRTUAL time through the adapter model `--adapter`
 * picks (src/mock/usb-adapter.ts): it shows the model, not this machine. On a port it is real time.
 */
import { fileURLToPath } from 'node:url';
import { loadRig, type Rig } from '../config/load.js';
import { ADAPTER_KINDS, adapterFlushS, adapterName, bootloaderBaudRefusal, cableAdvice, FTDI, type AdapterKind } from '../config/cable.js';
import { RealClock, settle } from '../time/clock.js';
import {
  choiceArg,
  formatHelp,
  noPositionals,
  numberArg,
  parse,
  SERIAL_OPTION,
  serialArg,
  UsageError,
  type OptionSpecs,
  type ParsedOf,
} from './args.js';
import {
  adapterCheck,
  adapterInfo,
  kernelInfo,
  platformChecks,
  platformInfo,
  realtimeInfo,
  systemChecks,
  type AdapterInfo,
  type DoctorCheck,
  type KernelInfo,
  type PlatformInfo,
  type RealtimeInfo,
} from './doctor-checks.js';
import { SERIAL_PATHS, type SerialPathChoice } from '../config/rig.js';

const OPTIONS = {
  port: { type: 'string', arg: 'PATH', help: 'serial port of the board (our firmware, or twolink rig --pty)' },
  mock: { type: 'boolean', help: "the rig file's simulated board, through an adapter model, in virtual time" },
  rig: {
    type: 'string',
    arg: 'FILE',
    help: 'rig file (with --mock: required; with --port: its link settings, default rigs/mock-arm.json)',
  },
  adapter: { type: 'string', arg: 'KIND', help: `with --mock: the adapter model, ${ADAPTER_KINDS.join(' | ')} (default: the rig's)` },
  'ftdi-latency': { type: 'string', arg: 'MS', help: 'with --mock --adapter ftdi: the latency timer, 1..255 ms (default 16)' },
  pings: { type: 'string', arg: 'N', help: 'round trips to measure, 20..100000 (default 1000: about 3 s on a 16U2)' },
  baud: { type: 'string', arg: 'N', help: "baud rate (default: the rig file's link.baudRate)" },
  serial: SERIAL_OPTION,
  json: { type: 'boolean', help: 'one JSON object: {platform, kernel, realtime, adapter, roundTripUs, recommend, checks}' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

export interface DoctorReport {
  /** The OS, Node and its support status, the serial path and the priority obtained. */
  platform: PlatformInfo;
  kernel: KernelInfo;
  realtime: RealtimeInfo;
  /** The cable (null: doctor without --port or --mock looked at the machine alone). */
  adapter: {
    kind: AdapterKind;
    vid: number | null;
    pid: number | null;
    latencyTimerMs: number | null;
    flushMs: number;
    what: string;
  } | null;
  /** Round trip host -> board -> host [us]; `clock` says real or virtual time. */
  roundTripUs: { p50: number; p99: number; p999: number; max: number; n: number; clock: 'real' | 'virtual' } | null;
  /** A loop rate for this machine and cable: only from a measured round trip (null when none was). */
  recommend: { rateHz: number; answerDelaySamples: number } | null;
  checks: DoctorCheck[];
}

/** The q-quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function summarize(rts: number[], clock: 'real' | 'virtual'): NonNullable<DoctorReport['roundTripUs']> {
  const s = rts.map((x) => x * 1e6).sort((a, b) => a - b);
  const r = (v: number): number => Math.round(v);
  return { p50: r(quantile(s, 0.5)), p99: r(quantile(s, 0.99)), p999: r(quantile(s, 0.999)), max: r(s[s.length - 1]!), n: s.length, clock };
}

/** The line protocol's view of `rig`: doctor measures the cable with pings of the line protocol, whatever the rig file's transport. */
function lineRig(rig: Rig): Rig {
  return { ...rig, link: { ...rig.link, transport: 'line' } };
}

/** The mock rig's board behind the adapter model, in virtual time. */
async function measureMock(rig: Rig, n: number): Promise<number[]> {
  const { compose } = await import('../run/compose.js');
  // The board's own terms (the rig file's encoders, no wiring): only pings follow.
  const c = await compose(lineRig(rig), { kind: 'mock' }, { time: 'virtual', link: { encoders: rig.encoders } });
  const clock = c.clock;
  const link = c.board;
  try {
    await c.drive(link.open());
    // Pauses of 0.1..10 ms (a fixed pseudo-random sequence) between pings: they meet the adapter at
    // every phase of its frames and timers. Virtual time moves only while a ping waits for its answer.
    let x = 12345;
    const rts: number[] = [];
    for (let i = 0; i < n; i++) {
      x = (x * 48271) % 2147483647; // Park-Miller: exact in doubles
      clock.advanceBy(0.0001 + (x / 2147483647) * 0.0099);
      await settle();
      const t0 = clock.now();
      await c.drive(link.ping());
      rts.push(clock.now() - t0);
    }
    await c.drive(link.close());
    return rts;
  } finally {
    await c.end.dispose();
  }
}

/** A real port (a board, or a pty from twolink rig --pty), in real time. */
async function measurePort(rig: Rig, path: string, baudRate: number, n: number, serial: SerialPathChoice): Promise<number[]> {
  const { openLinked } = await import('../run/compose.js');
  const { bootOf, probeLineBoard } = await import('../setup/probe.js');
  const clock = new RealClock();
  // Only pings follow: the link takes the board's own counts per revolution (whether they match the
  // rig file is twolink setup's question), so a board with other encoders is measured all the same.
  const { board: link } = await openLinked(lineRig(rig), { kind: 'port', path, baudRate, serial }, clock, async (end) => {
    const info = await probeLineBoard(end.stream, clock, rig.joints, rig.link.handshakeMs, bootOf(end));
    // the probe waited for a bootloader
    return { encoders: info ? info.cpr.map((c) => ({ countsPerRev: c, sign: 1 as const, zero: 0 })) : rig.encoders, bootloaderMs: 0 };
  });
  try {
    await link.open();
    // The time from writing `P` to its `A` [s], with pauses of 0-2 ms between pings.
    const rts: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = clock.now();
      await link.ping();
      rts.push(clock.now() - t0);
      await new Promise((r) => setTimeout(r, i % 3));
    }
    return rts;
  } finally {
    await link.close();
  }
}

/**
 * The rate and answer delay for this cable: the cable's advice (src/config/cable.ts: at most about
 * two samples per delivery), slowed down until the measured p99 round trip fits in four periods (the
 * prediction's horizon stays short); the delay covers the p99 round trip.
 */
export function recommend(kind: AdapterKind, latencyMs: number, rt: DoctorReport['roundTripUs']): NonNullable<DoctorReport['recommend']> {
  let rateHz = cableAdvice(kind, latencyMs).rateHz;
  const p99 = rt ? rt.p99 / 1e6 : 0;
  for (const r of [1000, 500, 250, 200, 100]) {
    if (r > rateHz) continue;
    rateHz = r;
    if (p99 <= 4 / r) break;
  }
  const advice = cableAdvice(kind, latencyMs, rateHz).answerDelaySamples;
  return { rateHz, answerDelaySamples: Math.max(advice, Math.ceil(p99 * rateHz)) };
}

function roundTripCheck(rt: DoctorReport['roundTripUs'], error: string | undefined, what: string, usb: boolean): DoctorCheck {
  if (!rt)
    return {
      name: 'round trip',
      status: 'fail',
      evidence: `no answer from ${what}: ${error ?? 'unknown error'}`,
      fix: 'check the port, the baud rate and that the board runs twolink_fw (or twolink rig --pty)',
    };
  const ms = (us: number): string => (us / 1000).toFixed(2);
  const ev = `${rt.n} pings (${rt.clock} time): p50 ${ms(rt.p50)} ms, p99 ${ms(rt.p99)} ms, p99.9 ${ms(rt.p999)} ms, max ${ms(rt.max)} ms`;
  const fix = usb
    ? 'a faster cable: see the adapter line (FTDI latency_timer 1, or a native-USB board)'
    : "not a cable: the machine is busy, or the simulated board behind the port is slow (twolink rig --pty models the adapter in its rig file's plant.adapter)";
  return rt.p99 <= 2500
    ? { name: 'round trip', status: 'pass', evidence: ev, fix: null }
    : { name: 'round trip', status: 'warn', evidence: ev, fix };
}

export async function doctorCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'doctor');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'doctor',
        'what limits real time on this machine and this cable',
        'doctor (--port PATH | --mock --rig FILE [--adapter KIND]) [--json]',
        OPTIONS,
      ),
    );
    return 0;
  }
  noPositionals(positionals, 'doctor');
  const port = typeof v.port === 'string' ? v.port : undefined;
  if (port !== undefined && v.mock) throw new UsageError('give either --port PATH or --mock --rig FILE, not both');
  if (port === undefined && !v.mock) return machineOnly(v);
  if (v.mock && typeof v.rig !== 'string') throw new UsageError('--mock needs --rig FILE (a rig file with a plant section)');
  if (!v.mock && v.adapter !== undefined)
    throw new UsageError("--adapter picks the mock's model: with --port the adapter is read from sysfs");
  const rigFile = typeof v.rig === 'string' ? v.rig : fileURLToPath(new URL('../../rigs/mock-arm.json', import.meta.url));
  let rig = loadRig(rigFile);
  const n = numberArg(v.pings, 'pings', { default: 1000, min: 20, max: 100_000, integer: true });
  let a: AdapterInfo;
  if (v.mock) ({ rig, a } = mockAdapter(v, rig, rigFile));
  else a = adapterInfo(port!);
  const baud = numberArg(v.baud, 'baud', { default: rig.link.baudRate, min: 300, max: 4_000_000, integer: true });
  const bootloader = v.mock ? undefined : bootloaderBaudRefusal(rig.cable, baud);
  if (bootloader) throw new UsageError(`${v.baud !== undefined ? '--baud' : 'link.baudRate'} ${baud}: ${rig.file}: ${bootloader}`);
  const serial = serialArg(v.serial, port) ?? rig.link.serial ?? 'auto';
  const platform = await platformInfo(serial);
  let rts: number[] | undefined;
  let error: string | undefined;
  try {
    rts = v.mock ? await measureMock(rig, n) : await measurePort(rig, port!, baud, n, serial);
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  const rt = rts && rts.length ? summarize(rts, v.mock ? 'virtual' : 'real') : null;
  const k = kernelInfo();
  const r = realtimeInfo();
  const latency = a.latencyTimerMs ?? FTDI.defaultLatencyMs;
  const checks = [
    ...platformChecks(platform),
    ...systemChecks(k, r),
    v.mock
      ? { name: 'adapter', status: 'pass' as const, evidence: `${a.what} (modelled, src/mock/usb-adapter.ts)`, fix: null }
      : adapterCheck(a, port!),
    roundTripCheck(rt, error, v.mock ? 'the mock' : port!, v.mock ? true : a.usb),
  ];
  const report: DoctorReport = {
    platform,
    kernel: k,
    realtime: r,
    adapter: { kind: a.kind, vid: a.vid, pid: a.pid, latencyTimerMs: a.latencyTimerMs, flushMs: a.flushMs, what: a.what },
    roundTripUs: rt,
    // No rate from a failed round trip: the cable alone would say 1000 Hz for a board that did not answer.
    recommend: rt ? recommend(a.kind, latency, rt) : null,
    checks,
  };
  if (v.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else process.stdout.write(humanReport(report));
  return checks.some((c) => c.status === 'fail') ? 1 : 0;
}

/** --mock (with --adapter, --ftdi-latency): the rig with the mock's adapter model, and that adapter as doctor describes one. */
function mockAdapter(v: ParsedOf<typeof OPTIONS>, rig: Rig, rigFile: string): { rig: Rig; a: AdapterInfo } {
  if (!rig.plant) throw new UsageError(`${rigFile}: has no "plant" section: the mock needs one (see rigs/mock-arm.json)`);
  const kind = choiceArg(v.adapter, 'adapter', ADAPTER_KINDS, rig.plant.adapter.kind);
  const latencyMs = numberArg(v['ftdi-latency'], 'ftdi-latency', {
    default: kind === rig.plant.adapter.kind ? rig.plant.adapter.latencyMs : FTDI.defaultLatencyMs,
    min: 1,
    max: 255,
    integer: true,
    unit: 'ms',
  });
  const a: AdapterInfo = {
    kind,
    what: `the mock's ${adapterName(kind, latencyMs)} model`,
    usb: false,
    vid: null,
    pid: null,
    driver: null,
    latencyTimerMs: kind === 'ftdi' ? latencyMs : null,
    flushMs: adapterFlushS(kind, latencyMs) * 1000,
    tty: null,
  };
  return { rig: { ...rig, plant: { ...rig.plant, adapter: { kind, latencyMs } } }, a };
}

/** `twolink doctor` without --port or --mock: the machine's checks alone (OS, Node, kernel, priority). */
async function machineOnly(v: {
  json?: boolean;
  serial?: string;
  rig?: string;
  adapter?: string;
  baud?: string;
  pings?: string;
}): Promise<number> {
  const given = (['rig', 'adapter', 'baud', 'pings'] as const).find((k) => v[k] !== undefined);
  if (given) throw new UsageError(`--${given} is for a cable check: give --port PATH (a board or a pty) or --mock --rig FILE with it`);
  // No port is opened here: --serial says which path to check (its binding loads; tty is Linux only), so it needs no --port.
  const serial = v.serial === undefined ? 'auto' : choiceArg(v.serial, 'serial', SERIAL_PATHS, 'auto');
  const platform = await platformInfo(serial);
  const k = kernelInfo();
  const r = realtimeInfo();
  const checks = [...platformChecks(platform), ...systemChecks(k, r)];
  const report: DoctorReport = { platform, kernel: k, realtime: r, adapter: null, roundTripUs: null, recommend: null, checks };
  if (v.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else process.stdout.write(humanReport(report));
  return checks.some((c) => c.status === 'fail') ? 1 : 0;
}

function humanReport(r: DoctorReport): string {
  const p = r.platform;
  const lines = [
    'twolink doctor: what limits real time here',
    '',
    `OS ${p.os}; Node ${p.node} (${p.nodeStatus}); serial path ${p.serial.path ?? 'none'} (--serial ${p.serial.choice}); priority ${p.priority.what}`,
    '',
  ];
  for (const c of r.checks) {
    lines.push(`[${c.status.toUpperCase()}] ${c.name}: ${c.evidence}`);
    if (c.fix) lines.push(`       fix: ${c.fix}`);
  }
  if (r.recommend)
    lines.push(
      '',
      `recommend: ${r.recommend.rateHz} Hz (control.rateHz in the rig file, or --rate), answers ~${r.recommend.answerDelaySamples} sample(s) after their sample`,
    );
  else if (r.adapter)
    lines.push(
      '',
      'recommend: no loop rate: the round trip failed, and a rate from the cable alone would be a guess (fix the round trip above, then run doctor again)',
    );
  else lines.push('', 'the cable and the round trip were not checked: twolink doctor --port PATH (a board or a pty), or --mock --rig FILE');
  return `${lines.join('\n')}\n`;
}
