/**
 * The Firmata mock rig in a process of its own, on a serial device (usually one end of a socat pty
 * pair), in real time:
 *
 *   node dist/mock/firmata-pty-main.js --rig rigs/mock-arm-firmata.json --port /dev/pts/3 [--boot-delay 0] [--watchdog-feature] [--rt]
 *
 * It prints one line when it is serving and runs until SIGINT/SIGTERM or until the device goes away.
 * `--boot-delay S` makes it wait S seconds before its first message, as a real board does after the
 * reset that opening its port causes (bootloader and blinkVersion: about 4 s). `--watchdog-feature`
 * adds twolink's FirmataWatchdog to the firmware (firmware-protocol/firmata-watchdog/); without it the
 * board is stock ConfigurableFirmata, which has no watchdog. `--rt`: SCHED_FIFO for every thread of
 * this process (the board runs on its main thread), as for the host: a board never starves.
 */
import { SerialPort } from 'serialport';
import { loadRig } from '../config/load.js';
import { RealClock } from '../time/clock.js';
import { serveFirmataMock } from './firmata-mock.js';
import { noRealtimeLine, requestRealtime, requestRealtimeProcess, threadId } from '../time/threads.js';

/** --rt: the board's thread (this one) at 45, the I/O and GC helpers at 44; one line if refused. */
async function realtime(): Promise<void> {
  const a = await requestRealtimeProcess(44);
  const r = a.granted ? await requestRealtime(threadId(), 45) : a;
  if (!r.granted) process.stderr.write(`${noRealtimeLine('firmata rig', `refused: ${r.reason}`)}\n`);
}

function arg(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

export function main(argv: readonly string[]): void {
  const rigFile = arg(argv, '--rig');
  const path = arg(argv, '--port');
  if (!rigFile || !path) {
    process.stderr.write('usage: firmata-pty-main --rig FILE --port DEVICE [--boot-delay S] [--watchdog-feature]\n');
    process.exit(2);
  }
  let rig: ReturnType<typeof loadRig>;
  try {
    rig = loadRig(rigFile);
    if (!rig.firmata || !rig.plant)
      throw new Error(`${rigFile}: the Firmata mock rig needs "firmata" and "plant" sections (see rigs/mock-arm-firmata.json)`);
  } catch (e) {
    process.stderr.write(`firmata rig: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  const bootDelayS = Number(arg(argv, '--boot-delay') ?? 0);
  if (!Number.isFinite(bootDelayS) || bootDelayS < 0 || bootDelayS > 60) {
    process.stderr.write(`firmata rig: --boot-delay: "${arg(argv, '--boot-delay')}" is not a delay in seconds (0-60)\n`);
    process.exit(2);
  }
  const watchdog = argv.includes('--watchdog-feature');
  const port = new SerialPort({ path, baudRate: rig.link.baudRate });
  let stop = (): void => {};
  port.on('open', () => {
    if (argv.includes('--rt')) void realtime();
    const served = serveFirmataMock(rig, port, new RealClock(), { bootDelayS, features: { encoder: true, watchdog } });
    stop = served.stop;
    const f = rig.firmata!;
    process.stdout.write(
      `firmata rig ${rig.name} on ${path}: ${f.board}, ConfigurableFirmata + FirmataEncoder${watchdog ? ' + FirmataWatchdog' : ' (stock: no watchdog)'} at ${rig.link.baudRate} baud\n`,
    );
  });
  let quitting = false;
  port.on('error', (e) => {
    // After a quit (the pty's relay ended by the same signal), a cancelled read is the end, not a fault.
    if (quitting) process.exit(0);
    process.stderr.write(`firmata rig: ${path}: ${e.message}\n`);
    process.exit(1);
  });
  port.on('close', () => {
    stop();
    process.exit(0);
  });
  const quit = (): void => {
    quitting = true;
    stop();
    if (port.isOpen) port.close(() => process.exit(0));
    else process.exit(0);
  };
  process.on('SIGINT', quit);
  process.on('SIGTERM', quit);
}

main(process.argv.slice(2));
