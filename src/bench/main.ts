/**
 * `npm run bench`: speed and timing figures, measured on this machine and printed (never asserted by
 * tests: these machines are shared and noisy). `--only NAME` runs one section; `--json FILE` also
 * writes the figures.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchController } from './controller.js';
import { benchAdapters } from './adapters.js';
import { benchFaults } from './faults.js';
import { benchCrash } from './crash.js';
import { benchFirmata } from './firmata.js';
import { firmwareSection } from './firmware.js';
import { benchInputs } from './fuzz.js';
import { benchIdentify } from './identify.js';
import { benchLink } from './link.js';
import { benchLoop } from './loop.js';
import { benchImpedance } from './impedance.js';
import { benchRealtime, benchSoak, type RealtimeOptions } from './realtime.js';
import { benchModel } from './model.js';
import { benchStartup } from './startup.js';
import { benchTui } from './tui.js';
import { benchFoxglove } from './foxglove.js';
import { benchFoxgloveFuzz } from './foxglove-fuzz.js';
import { benchTune, benchTuneRepeats } from './tune.js';
import { benchFloat } from './float.js';
import { benchSerial } from './serial.js';
import { benchHardware } from './hardware.js';
import { benchTunePort } from './tune-port.js';
import { printSection, type BenchResult } from './report.js';

const SECTIONS: Record<string, () => BenchResult | Promise<BenchResult>> = {
  model: benchModel,
  // Issue 22: `twolink model fk` within 70 ms of `node -e 0`, median of 7, interleaved.
  startup: () => benchStartup(7),
  link: benchLink,
  loop: () => benchLoop(),
  realtime: () => benchRealtime(runsOption()),
  firmata: benchFirmata,
  firmware: () => firmwareSection(),
  faults: benchFaults,
  inputs: benchInputs,
  tui: benchTui,
  foxglove: benchFoxglove,
  identify: benchIdentify,
  controller: benchController,
};

/** Sections run only when named with --only (they take long). */
const EXTRA: Record<string, () => BenchResult | Promise<BenchResult>> = {
  soak: () => benchSoak(Number(argValue('--soak-seconds') ?? 600)),
  // 18 real-time reaches (6 adapter models x 3 rates) + 2 on the pty rig; --adapter-runs N each.
  adapters: () => benchAdapters(Number(argValue('--adapter-runs') ?? 1)),
  // Issue 23: a 2 N push at 50/200/500 N/m, virtual time, then two real-time runs.
  impedance: () => benchImpedance(),
  // twolink tune on the mock in virtual time and in real time with --rt (about 2 minutes of wall time).
  tune: benchTune,
  // Issue 24: --tune-repeats N tunes (real time with --rt) and the spread of their gains; --tune-rig F (default rigs/mock-arm.json).
  'tune-repeats': () => benchTuneRepeats(Number(argValue('--tune-repeats') ?? 5), process.argv.includes('--rt'), argValue('--tune-rig')),
  // Issue 23: float drift and transients, teach and replay; --rt adds real time (--float-rt-poses N, default 4).
  float: () => benchFloat(process.argv.includes('--rt'), Number(argValue('--float-rt-poses') ?? 4)),
  // Issue 32: >= 10,000 random client messages against a real-time run with the live view (--foxglove-fuzz-messages N, --foxglove-fuzz-seconds S).
  'foxglove-fuzz': () =>
    benchFoxgloveFuzz(Number(argValue('--foxglove-fuzz-messages') ?? 10_000), Number(argValue('--foxglove-fuzz-seconds') ?? 60)),
  // Issue 32: a throw on the main or the loop thread to the Firmata pty rig's PWM pins at 0 (--crash-runs N each, default 5).
  crash: () => benchCrash(Number(argValue('--crash-runs') ?? 5)),
  // Issue 34: --serial tty vs serialport over the pty rigs, quiet and heavy; --serial-runs N each (default 5).
  serial: () => benchSerial(Number(argValue('--serial-runs') ?? 5)),
  // Issue 33: the reach on the mock with play, stiction and an H-bridge, each alone and all together, FF+PID and PID alone (virtual time).
  hardware: benchHardware,
  // Issue 33.6: tune and identify --port on the firmware rig, --tune-port-runs N each (default 3), --conditions quiet,heavy (6 hogs).
  'tune-port': () => benchTunePort(Number(argValue('--tune-port-runs') ?? 3), (argValue('--conditions') ?? 'quiet,heavy').split(',')),
};

function argValue(name: string): string | undefined {
  const args = process.argv.slice(2);
  return args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
}

/**
 * `--runs N` (busy and heavy runs per configuration, default 20), `--quiet-runs N` (default 5),
 * `--conditions quiet,busy,heavy,busy-no-rt` and `--configs pty,firmata,mock,firmata-pty,firmware,stock,demo`
 * (default all; also from TWOLINK_BENCH_CONDITIONS / TWOLINK_BENCH_CONFIGS).
 */
function runsOption(): RealtimeOptions {
  const busy = argValue('--runs');
  const quiet = argValue('--quiet-runs');
  const list = (flag: string, env: string): string[] | undefined => (argValue(flag) ?? process.env[env])?.split(',').filter(Boolean);
  const conditions = list('--conditions', 'TWOLINK_BENCH_CONDITIONS');
  const configs = list('--configs', 'TWOLINK_BENCH_CONFIGS');
  return {
    ...(busy ? { runsBusy: Number(busy) } : {}),
    ...(quiet ? { runsQuiet: Number(quiet) } : {}),
    ...(conditions ? { conditions } : {}),
    ...(configs ? { configs } : {}),
  };
}

const HELP = `npm run bench -- [--only a,b] [--json FILE] [options]: speed and timing figures, printed (never asserted).
sections run by default: ${Object.keys(SECTIONS).join(', ')}
sections run only with --only: ${Object.keys(EXTRA).join(', ')}
options: --runs N, --quiet-runs N, --conditions quiet,busy,heavy,busy-no-rt, --configs ... (realtime); --soak-seconds S (soak);
  --foxglove-fuzz-messages N, --foxglove-fuzz-seconds S (foxglove-fuzz); --adapter-runs N (adapters); --crash-runs N (crash); --serial-runs N (serial); --rt, --float-rt-poses N (float); --tune-repeats N [--rt] [--tune-rig F] (tune-repeats: N tunes, real time with --rt);
  --tune-port-runs N, --conditions quiet,heavy (tune-port)
`;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1]!.split(',') : Object.keys(SECTIONS);
  const jsonOut = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
  process.stdout.write(
    `twolink bench: node ${process.version}, ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  const results: BenchResult[] = [];
  for (const name of only) {
    const fn = SECTIONS[name] ?? EXTRA[name];
    if (!fn) throw new Error(`unknown bench section "${name}" (${[...Object.keys(SECTIONS), ...Object.keys(EXTRA)].join(', ')})`);
    const r = await fn();
    printSection(r);
    results.push(r);
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(Object.fromEntries(results.map((r) => [r.title, r.figures])), null, 2));
}

main().catch((e) => {
  process.stderr.write(`bench: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
