// Issue 34 item 5, opening without surprises (src/transport/dtr.ts): which opens reset an Uno-class
// board, the HUPCL flag read from `stty -a`, serialport's `hupcl` for the relay per OS, and the
// handshake that waits for a reset board's bootloader with one line that says so, then fails with an
// error that says it waited. Virtual time: the board below is in its bootloader for 1.5 s (it swallows
// the hellos), then sends its banner and answers. The same over a pty, and the flag itself on a pty:
// tests/realtime/dtr-pty.test.ts.
import { SerialPortStream } from '@serialport/stream';
import { describe, expect, it } from 'vitest';
import { describeEvent } from '../src/control/events.js';
import { loadRig } from '../src/config/load.js';
import { mockBinding } from '../src/mock/binding.js';
import { probeLineBoard } from '../src/setup/probe.js';
import { VirtualClock } from '../src/time/clock.js';
import { driveToEnd } from './helpers/virtual-drive.js';
import { BOOTLOADER_WAIT_MS, bootloaderWaitText, hupclIn, isPty, openResetBoard, relayHupcl, resetsOnDtr } from '../src/transport/dtr.js';
import { LineLink } from '../src/transport/line-link.js';
import type { LinkEvent } from '../src/transport/link.js';
import { BootloaderBoard } from './helpers/bootloader-board.js';

const rig = loadRig('rigs/mock-arm.json');

const drive = driveToEnd;

/** A link to a board that is in its bootloader for `bootS` seconds (never leaves it: Infinity). */
async function linkToResetBoard(bootS: number, o: { handshakeMs: number; bootloaderMs?: number }) {
  const clock = new VirtualClock();
  const board = new BootloaderBoard(rig, clock, bootS);
  const binding = mockBinding('/dev/ttyACM0', board);
  const stream = await new Promise<SerialPortStream>((resolve, reject) => {
    const s = new SerialPortStream({ binding, path: '/dev/ttyACM0', baudRate: rig.link.baudRate, autoOpen: false });
    s.open((e) => (e ? reject(e) : resolve(s)));
  });
  const link = new LineLink({
    stream,
    name: '/dev/ttyACM0',
    baudRate: rig.link.baudRate,
    clock,
    encoders: rig.encoders,
    watchdogMs: 100,
    ...o,
  });
  const events: { e: LinkEvent; t: number }[] = [];
  link.onEvent((e) => events.push({ e, t: clock.now() }));
  return { clock, board, link, events, stream };
}

describe('which opens reset the board (dtr.ts)', () => {
  it('an Uno-class board (16U2, CH340, FTDI) resets when DTR goes up; native USB and a bare wire do not', () => {
    expect(resetsOnDtr('16u2')).toBe(true);
    expect(resetsOnDtr('ch340')).toBe(true);
    expect(resetsOnDtr('ftdi')).toBe(true);
    expect(resetsOnDtr('native')).toBe(false);
    expect(resetsOnDtr('none')).toBe(false);
  });

  it('reset: DTR raised by this open or not known (macOS); not when it stayed up (HUPCL clear) or there is none (a pty, Windows holding it off)', () => {
    expect(openResetBoard('raised', '16u2')).toBe(true);
    expect(openResetBoard('unknown', 'ch340')).toBe(true);
    expect(openResetBoard('kept', '16u2')).toBe(false);
    expect(openResetBoard('none', '16u2')).toBe(false);
    expect(openResetBoard('raised', 'native')).toBe(false);
  });

  it("the relay's serialport `hupcl`: false (Windows opens with DTR held off; Linux clears HUPCL itself), true on Windows for a native-USB board, which sends only while DTR is up", () => {
    expect(relayHupcl('linux', '16u2')).toBe(false);
    expect(relayHupcl('darwin', '16u2')).toBe(false);
    expect(relayHupcl('win32', '16u2')).toBe(false);
    expect(relayHupcl('win32', 'ftdi')).toBe(false);
    expect(relayHupcl('win32', 'native')).toBe(true);
    expect(relayHupcl('win32', undefined)).toBe(false);
  });

  it('the HUPCL flag in `stty -a` (GNU coreutils), set, clear or absent', () => {
    const line = (f: string): string => `speed 115200 baud; line = 0;\n-parenb -parodd -cmspar cs8 ${f} -cstopb cread clocal -crtscts\n`;
    expect(hupclIn(line('hupcl'))).toBe(true);
    expect(hupclIn(line('-hupcl'))).toBe(false);
    expect(hupclIn('speed 9600 baud;\n-parenb cs8 -cstopb')).toBeUndefined();
    expect(isPty('/dev/pts/7')).toBe(true);
    expect(isPty('/dev/ttyACM0')).toBe(false);
  });

  it("the bootloader's time: Optiboot's 1 s watchdog, the Mega's and older bootloaders' 1-2 s, and the sketch's start", () => {
    expect(BOOTLOADER_WAIT_MS).toBe(2500);
  });
});

describe('the handshake with a board the open reset', () => {
  it("says once that it waits for the bootloader, after the first unanswered hello, then opens when the sketch's banner and answer come", async () => {
    const r = await linkToResetBoard(1.5, { handshakeMs: 1000, bootloaderMs: BOOTLOADER_WAIT_MS });
    const opened = await drive(r.clock, r.link.open());
    expect(opened.ok, opened.ok ? '' : opened.e.message).toBe(true);
    expect(r.board.swallowed).toBeGreaterThan(0); // the hellos sent into the bootloader
    const waits = r.events.filter((x) => x.e.kind === 'waiting');
    expect(waits).toHaveLength(1);
    expect(waits[0]!.t).toBeGreaterThanOrEqual(0.25); // after the first hello's answer time, not at once
    expect(waits[0]!.t).toBeLessThan(1.5);
    const text = (waits[0]!.e as Extract<LinkEvent, { kind: 'waiting' }>).text;
    expect(text).toMatch(/^waiting for the board's bootloader \(opening \/dev\/ttyACM0 reset it\) up to \d+ ms \.\.\.$/);
    // the dashboard's and the console's line is the text itself
    expect(describeEvent({ kind: 'link', event: waits[0]!.e, t: 0 })).toBe(`[0.00 s] ${text}`);
    expect(r.clock.now()).toBeGreaterThanOrEqual(1.5);
    r.board.dispose();
  });

  it('without the bootloader wait (a port that did not reset the board), the same board fails the handshake: the wait is what opens it', async () => {
    const r = await linkToResetBoard(1.5, { handshakeMs: 1000 });
    const opened = await drive(r.clock, r.link.open());
    expect(opened.ok).toBe(false);
    if (!opened.ok)
      expect(opened.e.message).toMatch(/^\/dev\/ttyACM0: no twolink handshake within 1000 ms at \d+ baud: nothing at all came back/);
    expect(r.events.filter((x) => x.e.kind === 'waiting')).toHaveLength(0);
    r.board.dispose();
  });

  it('a board that never leaves its bootloader: a bounded wait, then an error that says it waited for the bootloader and how long', async () => {
    const r = await linkToResetBoard(Infinity, { handshakeMs: 1000, bootloaderMs: BOOTLOADER_WAIT_MS });
    const opened = await drive(r.clock, r.link.open());
    expect(opened.ok).toBe(false);
    if (!opened.ok) {
      const m =
        /^\/dev\/ttyACM0: no twolink handshake within 1000 ms \+ 2500 ms for the bootloader \(opening the port reset the board\) at \d+ baud: nothing at all came back.* \(waited (\d+) ms, \d+ hellos\)$/.exec(
          opened.e.message,
        );
      expect(m, opened.e.message).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThanOrEqual(3500);
      expect(Number(m![1])).toBeLessThan(3500 + 300); // bounded: at most one more hello's answer time
    }
    expect(r.events.filter((x) => x.e.kind === 'waiting')).toHaveLength(1);
  });

  it('a board that answers at once (it did not reset after all) opens without the line', async () => {
    const r = await linkToResetBoard(0, { handshakeMs: 1000, bootloaderMs: BOOTLOADER_WAIT_MS });
    const opened = await drive(r.clock, r.link.open());
    expect(opened.ok, opened.ok ? '' : opened.e.message).toBe(true);
    expect(r.events.filter((x) => x.e.kind === 'waiting')).toHaveLength(0);
    r.board.dispose();
  });

  it("setup's and doctor's probe waits the same way and says so once; without the wait it gives up", async () => {
    for (const boot of [true, false]) {
      const r = await linkToResetBoard(1.5, { handshakeMs: 1000 });
      const said: string[] = [];
      const info = await drive(
        r.clock,
        probeLineBoard(
          r.stream,
          r.clock,
          rig.joints,
          1000,
          boot ? { name: '/dev/ttyACM0', bootloaderMs: BOOTLOADER_WAIT_MS, say: (t) => said.push(t) } : undefined,
        ),
      );
      expect(info.ok).toBe(true);
      if (info.ok) expect(info.v?.joints).toBe(boot ? rig.joints : undefined);
      expect(said).toEqual(boot ? [bootloaderWaitText('/dev/ttyACM0', 1000 + BOOTLOADER_WAIT_MS - 250)] : []);
      r.board.dispose();
    }
  });
});
