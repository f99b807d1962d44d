// A host's first words to a pty rig, and no more: opens the host end of its pty and asks the board for its
// identity as twolink's host does first (the line protocol's H frame; Firmata's REPORT_VERSION), so that a
// test can time the rig's injections from the handshake without a whole `twolink run`.
import { SerialPort } from 'serialport';
import { loadRig } from '../../src/config/load.js';
import { encodeHostFrame, PROTOCOL } from '../../src/protocol/codec.js';
import { FIRMATA } from '../../src/protocol/firmata.js';

/** Opens `path` at the rig file's baud rate and writes the handshake request; resolves with the open port (the caller closes it). */
export async function sendHandshake(path: string, rigFile: string): Promise<SerialPort> {
  const rig = loadRig(rigFile);
  const port = new SerialPort({ path, baudRate: rig.link.baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  port.on('data', () => undefined); // the board's answers: read and dropped
  const request =
    rig.link.transport === 'firmata'
      ? Buffer.from([FIRMATA.REPORT_VERSION])
      : Buffer.from(encodeHostFrame({ type: 'H', seq: 1, proto: PROTOCOL }));
  await new Promise<void>((resolve, reject) => port.write(request, (e) => (e ? reject(e) : resolve())));
  return port;
}

/** Closes a port from sendHandshake (already closed: nothing). */
export function closePort(port: SerialPort | undefined): Promise<void> {
  return new Promise((resolve) => (port?.isOpen ? port.close(() => resolve()) : resolve()));
}
