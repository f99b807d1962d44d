/**
 * `twolink rig`: the mock rig in a process of its own, in real time, on a pseudo-terminal (created
 * with socat; its path is the first stdout line) or on a given serial device. The host then opens that
 * path as it would a board: `twolink run --rig F --port /dev/pts/N`.
 */
import { SerialPort } from 'serialport';
import { loadRig } from '../config/load.js';
import { FAULT_KINDS, parseFault, type FaultSpec } from '../control/faults.js';
import { serveLineRig } from '../rig/mock-rig.js';
import { createPtyPair, type PtyPair } from '../rig/pty.js';
import { RealClock } from '../time/clock.js';
import { WIRING_OPTION, wiringArg, wiringHelp } from './wiring-arg.js';
import { formatHelp, noPositionals, parse, stringArg, UsageError, type OptionSpecs } from './args.js';

const OPTIONS = {
  rig: { type: 'string', arg: 'FILE', help: 'rig file with a plant section (rigs/mock-arm.json, rigs/mock-arm-firmata.json)' },
  pty: { type: 'boolean', help: 'create a pty pair with socat; print the host end as the first stdout line' },
  port: { type: 'string', arg: 'PATH', help: 'serve on this existing serial device instead' },
  fault: { type: 'string', arg: 'KIND[=V][@T]', multiple: true, help: 'inject a fault T seconds after start (line protocol rig; see twolink run --help)' },
  wiring: WIRING_OPTION,
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

export async function rigCommand(argv: readonly string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, OPTIONS, 'rig');
  if (v.help) {
    process.stdout.write(
      formatHelp(
        'rig',
        'the mock rig (a simulated arm that speaks the board protocol) on a serial device, in real time',
        'rig --rig F (--pty | --port PATH) [--fault KIND[=V][@T]]...',
        OPTIONS,
        `Example:\n  twolink rig --rig rigs/mock-arm.json --pty        # prints e.g. /dev/pts/5\n  twolink run --rig rigs/mock-arm.json --port /dev/pts/5 --traj reach --json\n\nFault kinds: ${Object.keys(FAULT_KINDS).join(', ')}\n\n${wiringHelp()}`,
      ),
    );
    return 0;
  }
  noPositionals(positionals, 'rig', 'give the rig file with --rig');
  const rig = loadRig(stringArg(v.rig, 'rig', 'a rig file with a plant section, e.g. --rig rigs/mock-arm.json'));
  if (!rig.plant) throw new UsageError(`${rig.file} has no "plant" section: the mock rig needs the true arm to simulate`);
  if (!!v.pty === (typeof v.port === 'string')) throw new UsageError('give exactly one of --pty and --port PATH');
  const wiring = wiringArg(v.wiring, rig.joints, true);
  const faults: FaultSpec[] = ((v.fault as string[] | undefined) ?? []).map((f) => {
    try {
      return parseFault(f, rig.joints);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  });
  let pty: PtyPair | undefined;
  let boardPath: string;
  if (v.pty) {
    pty = await createPtyPair();
    boardPath = pty.paths[0];
    process.stdout.write(`${pty.paths[1]}\n`);
  } else {
    boardPath = v.port as string;
  }
  const port = new SerialPort({ path: boardPath, baudRate: rig.link.baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(new UsageError(`${boardPath}: ${e.message}`)) : resolve())));
  const clock = new RealClock();
  let stop: () => void;
  let handles: { plant?: unknown; board?: unknown } = {};
  if (rig.link.transport === 'firmata') {
    const { serveFirmataRig } = await import('../rig/mock-firmata-rig.js');
    const s = serveFirmataRig(rig, port, clock, wiring ? { wiring } : {});
    stop = s.stop;
    handles = s;
  } else {
    const s = serveLineRig(rig, port, clock, wiring);
    stop = s.stop;
    handles = s;
  }
  process.stderr.write(`twolink rig: ${rig.name} (${rig.link.transport} protocol, ${rig.link.baudRate} baud) serving on ${boardPath}${pty ? `; the host opens ${pty.paths[1]}` : ''}\n`);
  // Scheduled faults, relative to the rig's start.
  for (const f of faults) {
    setTimeout(() => {
      const b = handles.board as { faults?: Record<string, unknown>; reset?: () => void; injectRaw?: (x: Uint8Array) => void };
      const plant = handles.plant as { setPayload?: (kg: number) => void; faults?: { stalled: boolean[] } };
      if (f.kind === 'silent' && b.faults) b.faults.silent = true;
      else if (f.kind === 'reset') b.reset?.();
      else if (f.kind === 'garbage') b.injectRaw?.(new Uint8Array(Number(f.value ?? 5000)).map((_, i) => (i * 2654435761) >>> 24));
      else if (f.kind === 'longline') b.injectRaw?.(new Uint8Array(Number(f.value ?? 1000000)).fill(0x54));
      else if (f.kind === 'payload') plant.setPayload?.(Number(f.value ?? 0.2));
      else if (f.kind === 'drop' && b.faults) b.faults.dropProbability = Number(f.value ?? 0.01);
      else if (f.kind === 'corrupt' && b.faults) b.faults.corruptProbability = Number(f.value ?? 0.01);
      else process.stderr.write(`twolink rig: fault ${f.kind} is not available on the pty rig\n`);
    }, f.at * 1000).unref();
  }
  return new Promise((resolve) => {
    const quit = (code: number): void => {
      stop();
      pty?.close();
      if (port.isOpen) port.close(() => resolve(code));
      else resolve(code);
    };
    process.once('SIGINT', () => quit(0));
    process.once('SIGTERM', () => quit(0));
    port.on('close', () => quit(0));
    pty?.process.on('exit', () => quit(0));
  });
}
