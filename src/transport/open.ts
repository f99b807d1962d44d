/**
 * Opening a serial port: serial errors become messages that name the port and the fix (open-error.ts).
 * (Opening the rig's link to a port or to the mock rig is src/run/target.ts.)
 *
 * Two paths (docs/serial.md), chosen by `--serial` or the rig file's `link.serial`:
 * - `tty`: twolink's own Linux binding (tty-binding.ts: fs + stty), in whatever thread opens it;
 * - `serialport`: serialport's native binding in a relay process whose main thread owns the port
 *   (relay-binding.ts), on Linux, macOS and Windows; serialport's binding itself cannot read inside a
 *   worker thread, where the loop runs (serialport/node-serialport #2748, #2974).
 * `auto` is tty on Linux and serialport elsewhere.
 */
import type { Duplex } from 'node:stream';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { SerialPathChoice } from '../config/rig.js';
import { LinkError } from './link.js';
import { explainOpenError } from './open-error.js';
import type { RelayInfo } from './relay-binding.js';
import type { AdapterKind } from '../config/cable.js';
import { relayHupcl, type DtrOnOpen } from './dtr.js';

/** A serial path itself (what `auto` resolves to). */
export type SerialPath = Exclude<SerialPathChoice, 'auto'>;

/** The path `choice` means on `platform`; throws a LinkError for `tty` off Linux (it reads /proc and runs GNU stty). */
export function resolveSerialPath(choice: SerialPathChoice = 'auto', platform: NodeJS.Platform = process.platform): SerialPath {
  if (choice === 'auto') return platform === 'linux' ? 'tty' : 'serialport';
  if (choice === 'tty' && platform !== 'linux')
    throw new LinkError(
      `--serial tty is the Linux path (it uses /proc and GNU stty); on ${platform} use --serial serialport (or auto)`,
      'open',
    );
  return choice;
}

/** How to open: the path, and for the relay its priority (`rt`) and who hears what it got. */
export interface SerialOptions {
  serial?: SerialPathChoice;
  /** Ask for priority for the serialport path's relay process. @default false */
  rt?: boolean;
  onRelay?: (info: RelayInfo) => void;
  /** The board's USB path (the rig file's): on Windows a native-USB board needs DTR up, the others are opened with it held off (dtr.ts). */
  adapter?: AdapterKind;
}

/** An open port's stream, and which path carries it (for the one line that says so). */
export interface OpenedSerial {
  stream: Duplex;
  path: SerialPath;
  /** For people: "tty (twolink's Linux binding, in this thread)", "serialport (relay process 1234, SCHED_FIFO 41)". */
  describe: string;
  /** What the open did to DTR (dtr.ts): `raised` may have reset an Uno-class board. */
  dtr: DtrOnOpen;
}

/** Opens a real serial port on the chosen path and waits until it is open. */
export async function openSerial(path: string, baudRate: number, o: SerialOptions = {}): Promise<OpenedSerial> {
  const which = resolveSerialPath(o.serial);
  const { SerialPortStream } = await import('@serialport/stream');
  let relay: RelayInfo | undefined;
  const binding: BindingInterface =
    which === 'tty'
      ? (await import('./tty-binding.js')).ttyBinding
      : (await import('./relay-binding.js')).relayBinding({
          rt: o.rt ?? false,
          onRelay: (info) => {
            relay = info;
            o.onRelay?.(info);
          },
        });
  const stream = await new Promise<Duplex>((resolve, reject) => {
    const s = new SerialPortStream({ binding, path, baudRate, autoOpen: false, hupcl: relayHupcl(process.platform, o.adapter) });
    s.open((err) => (err ? reject(err instanceof LinkError ? err : explainOpenError(path, err)) : resolve(s)));
  });
  const describe =
    which === 'tty'
      ? "tty (twolink's Linux binding)"
      : `serialport (relay process ${relay?.pid ?? '?'}, ${relay?.priority ?? 'priority unknown'})`;
  const dtr = (stream as Duplex & { port?: { dtr?: DtrOnOpen } }).port?.dtr ?? 'unknown';
  return { stream, path: which, describe, dtr };
}

/** Opens a real serial port (the rig's default path for this OS: `auto`) and waits until it is open. */
export async function openSerialPort(path: string, baudRate: number, o: SerialOptions = {}): Promise<Duplex> {
  return (await openSerial(path, baudRate, o)).stream;
}
