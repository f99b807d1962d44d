/**
 * Failure figures: the fuzzing of the decoders (a million inputs each), and how long the arm takes to
 * get a zero command after an e-stop, a Ctrl-C, a lost link and a pulled cable (the last two injected
 * into the mock: `silent`, `unplug`), measured in real time on the mock rig in the loop's own thread
 * (a RealClock; the loop answers the board's samples).
 */
import { loadRig } from '../config/load.js';
import type { LoopCommand } from '../control/commands.js';
import type { StopReason } from '../control/stop.js';
import { builtinPath } from '../model/builtins.js';
import { applyInjection } from '../mock/injections.js';
import { composeRun } from '../run/compose.js';
import { fuzzFirmata, fuzzLine } from './fuzz.js';
import { section, type BenchResult } from './report.js';

type Scenario = 'estop' | 'ctrl-c' | 'link-lost' | 'unplug';

/** One run: the e-stop, Ctrl-C or injection when the reach starts tracking; returns [ms to the zero command sent, ms to the motors at zero]. */
async function latency(kind: Scenario): Promise<[number, number]> {
  const rig = loadRig('rigs/mock-arm.json');
  const abort = new AbortController();
  let send: ((c: LoopCommand) => void) | undefined;
  let faultAt = -1;
  // The mock in this thread, in real time (run/compose.ts).
  const run = await composeRun({
    rig,
    place: { kind: 'mock' },
    time: 'real',
    link: { handshakeMs: 3000 },
    mode: { mode: 'track' },
    rateHz: 500,
    feedforward: 'desired',
    paths: [builtinPath(rig.arm, 'reach')!],
    signal: abort.signal,
    sink: () => {},
    onReady: (c) => (send = c.send),
    onTick: (core) => {
      if (faultAt < 0 && core.progress?.phase === 'track') {
        faultAt = clock.now();
        // what a key handler, a signal handler or the cable does, between ticks
        setTimeout(() => {
          faultAt = clock.now();
          if (kind === 'estop') send?.({ kind: 'estop' });
          else if (kind === 'ctrl-c') abort.abort({ kind: 'interrupted', signal: 'SIGINT' } satisfies StopReason);
          else applyInjection(site, { name: kind === 'link-lost' ? 'silent' : 'unplug', at: 0 });
        }, 0);
      }
    },
    maxSeconds: 10,
  });
  const { clock, link } = run.composed;
  const { mock, site } = run.composed.end.local!;
  let zeroSent = -1;
  let motorsZero = -1;
  const write = link.writeDuty.bind(link);
  link.writeDuty = (d) => {
    if (faultAt >= 0 && zeroSent < 0 && d.every((x) => x === 0)) zeroSent = clock.now();
    return write(d);
  };
  const setDuty = mock.plant.setDuty.bind(mock.plant);
  mock.plant.setDuty = (d) => {
    setDuty(d);
    if (faultAt >= 0 && motorsZero < 0 && mock.plant.duty.every((x) => x === 0)) motorsZero = clock.now();
  };
  try {
    await run.run();
  } finally {
    await run.close();
  }
  return [(zeroSent - faultAt) * 1000, (motorsZero - faultAt) * 1000];
}

export async function benchFaults(): Promise<BenchResult> {
  const rows: [string, string, string][] = [];
  const figures: Record<string, number> = {};
  const line = fuzzLine(1_000_000);
  rows.push([
    'fuzz: line protocol decoders',
    `${(line.inputs / 1e6).toFixed(2)} M inputs in ${line.seconds.toFixed(1)} s`,
    `exceptions ${line.exceptions}, bad checksums accepted ${line.badChecksumAccepted}, mutated frames accepted (CRC-16 collisions) ${line.mutatedAccepted}, heap growth ${line.heapGrowthMb.toFixed(1)} MB, a 1 MB line included`,
  ]);
  const fir = await fuzzFirmata(1_000_000);
  rows.push([
    'fuzz: Firmata (firmata.js + FirmataLink)',
    `${(fir.inputs / 1e6).toFixed(2)} M inputs in ${fir.seconds.toFixed(1)} s`,
    `exceptions escaping ${fir.exceptions}, messages rejected ${fir.rejectedAsCorrupt}, heap growth ${fir.heapGrowthMb.toFixed(1)} MB, decoding after: ${fir.readingAfter ? 'yes' : 'NO'}`,
  ]);
  Object.assign(figures, {
    fuzzLineExceptions: line.exceptions,
    fuzzLineBadCrc: line.badChecksumAccepted,
    fuzzFirmataExceptions: fir.exceptions,
  });
  for (const k of ['estop', 'ctrl-c', 'link-lost', 'unplug'] as const) {
    const runs: [number, number][] = [];
    for (let i = 0; i < 3; i++) runs.push(await latency(k));
    const med = (xs: number[]): number => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const sent = med(runs.map((r) => r[0]));
    const zero = med(runs.map((r) => r[1]));
    const what: Record<Scenario, string> = {
      estop: 'e-stop (key or command) -> zero command sent / motors at zero',
      'ctrl-c': 'Ctrl-C (soft stop, 0.2 s torque ramp) -> zero command / motors at zero',
      'link-lost': 'board goes silent -> host declares the link lost (25 samples) -> zero / stop',
      unplug: 'cable pulled -> board watchdog (100 ms) stops the motors',
    };
    rows.push([
      what[k],
      `${sent.toFixed(1)} ms / ${zero.toFixed(1)} ms`,
      `median of 3 (max ${Math.max(...runs.map((r) => r[1])).toFixed(1)} ms to zero)`,
    ]);
    figures[`${k}ZeroMs`] = zero;
  }
  return section('Faults: fuzzing and time to a zero motor command (mock rig, 500 Hz)', rows, figures);
}
