/**
 * `twolink ports`: the serial ports on this machine. serialport's list() asks udev (`udevadm`); on a
 * machine without udev (containers, CI) that fails with `spawn udevadm ENOENT`, so twolink falls back
 * to looking at /dev itself and says so.
 */
import { readdirSync, realpathSync } from 'node:fs';
import { errorMessage, formatHelp, parse, type OptionSpecs } from './args.js';

const OPTIONS = {
  json: { type: 'boolean', help: 'one JSON object: {"ports":[...],"source":...}' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
} as const satisfies OptionSpecs;

interface Port {
  path: string;
  description: string;
}

/** Serial devices found in /dev without udev. */
export function scanDev(dev = '/dev'): Port[] {
  const out: Port[] = [];
  try {
    for (const f of readdirSync(`${dev}/serial/by-id`)) {
      out.push({ path: realpathSync(`${dev}/serial/by-id/${f}`), description: f });
    }
  } catch {
    // no by-id links without udev
  }
  let names: string[];
  try {
    names = readdirSync(dev);
  } catch {
    return out;
  }
  for (const n of names.filter((x) => /^tty(ACM|USB|AMA|S)\d+$/.test(x)).sort()) {
    const path = `${dev}/${n}`;
    if (out.some((p) => p.path === path)) continue;
    const description = n.startsWith('ttyACM')
      ? 'USB CDC (Arduino Uno/Mega with 16U2, Leonardo...)'
      : n.startsWith('ttyUSB')
        ? 'USB-serial adapter (CH340, FTDI, CP210x: Nano clones...)'
        : 'on-board UART';
    if (n.startsWith('ttyS') && Number(n.slice(4)) > 3) continue; // the dozens of legacy ttyS ports
    out.push({ path, description });
  }
  return out;
}

export async function portsCommand(argv: readonly string[]): Promise<number> {
  const { values: v } = parse(argv, OPTIONS, 'ports');
  if (v.help) {
    process.stdout.write(formatHelp('ports', 'list serial ports (boards)', 'ports [--json]', OPTIONS));
    return 0;
  }
  let ports: Port[];
  let source: string;
  try {
    const { SerialPort } = await import('serialport');
    const list = await SerialPort.list();
    ports = list.map((p) => ({
      path: p.path,
      description: [p.manufacturer, p.serialNumber && `serial ${p.serialNumber}`, p.vendorId && `${p.vendorId}:${p.productId}`]
        .filter(Boolean)
        .join(', '),
    }));
    source = 'udev';
  } catch (e) {
    ports = scanDev();
    const msg = errorMessage(e);
    const why = msg.includes('udevadm') ? 'udev is not available here (no udevadm)' : msg;
    source = `/dev scan (${why})`;
  }
  if (v.json) {
    process.stdout.write(`${JSON.stringify({ ports, source })}\n`);
    return 0;
  }
  process.stdout.write(
    ports.length ? ports.map((p) => `${p.path}  ${p.description}`).join('\n') + '\n' : 'no serial ports found (is the board plugged in?)\n',
  );
  process.stderr.write(`(listed from the ${source})\n`);
  return 0;
}
