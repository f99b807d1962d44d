// The Arduino firmware in firmware-protocol/firmware: its host tests (protocol and state machine
// against the conformance vectors, g++ with ASan/UBSan), the AVR builds for the Uno and the Mega with
// their flash/RAM limits, and, where simavr is installed, the real image in a simulator.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { hangGuardMs } from './helpers/hang-guard.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const firmwareDir = join(root, 'firmware-protocol', 'firmware');
const vectorsDir = join(root, 'firmware-protocol', 'vectors');
const arduinoCore = '/usr/share/arduino/hardware/arduino/avr/cores/arduino/Arduino.h';
// A hang guard (tests/helpers/hang-guard.ts): make runs the compilers, slow on a loaded machine.
const TIMEOUT_MS = hangGuardMs(180_000);

const INSTALL_AVR =
  'the AVR toolchain is missing: install it with `sudo apt-get install gcc-avr avr-libc arduino-core-avr` ' +
  '(CI installs these packages)';

/** Runs make in the firmware folder; the output is returned for the assertion messages. */
function make(...targets: string[]): { status: number | null; output: string } {
  const r = spawnSync('make', ['--no-print-directory', '-C', firmwareDir, ...targets], {
    encoding: 'utf8',
    timeout: TIMEOUT_MS - 10_000,
  });
  if (r.error) throw new Error(`cannot run make: ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

/** Vector lines (not comments) of a vectors file, optionally only one verdict. */
function vectorCount(file: string, verdict?: 'accept' | 'reject'): number {
  return readFileSync(join(vectorsDir, file), 'utf8')
    .split('\n')
    .filter((line) => (verdict ? line.startsWith(`${verdict}\t`) : /^(accept|reject)\t/.test(line))).length;
}

const hasSimavr = existsSync('/usr/include/simavr/sim_avr.h') && onPath('avr-gcc');

describe('twolink firmware (firmware-protocol/firmware)', () => {
  it(
    'passes its host tests against every conformance vector (make host-test)',
    () => {
      const { status, output } = make('host-test');
      expect(status, output).toBe(0);
      const hostToBoard = /vectors host-to-board: (\d+)\/(\d+) passed/.exec(output);
      const boardToHost = /vectors board-to-host: (\d+)\/(\d+) passed; formatters reproduce (\d+)\/(\d+)/.exec(output);
      expect(hostToBoard, output).not.toBeNull();
      expect(boardToHost, output).not.toBeNull();
      const nHost = vectorCount('host-to-board.txt');
      const nBoard = vectorCount('board-to-host.txt');
      const nBoardAccept = vectorCount('board-to-host.txt', 'accept');
      expect(nHost).toBeGreaterThan(50);
      expect(hostToBoard!.slice(1, 3).map(Number)).toEqual([nHost, nHost]);
      expect(boardToHost!.slice(1, 5).map(Number)).toEqual([nBoard, nBoard, nBoardAccept, nBoardAccept]);
      // Streaming mode (PROTOCOL.md section 8) has its own cases: test/stream_test.cpp.
      const streaming = /streaming-mode checks: (\d+)/.exec(output);
      expect(streaming, output).not.toBeNull();
      expect(Number(streaming![1])).toBeGreaterThan(100);
      expect(output).toMatch(/host_test: PASS, \d+ checks, 0 failed/);
    },
    TIMEOUT_MS,
  );

  // Flash for the sketch (minus the bootloader) and RAM, as ArduinoCore-avr's boards.txt gives them.
  const limits = { uno: { flash: 32256, ram: 2048 }, mega: { flash: 253952, ram: 8192 }, leonardo: { flash: 28672, ram: 2560 } } as const;
  for (const board of ['uno', 'mega', 'leonardo'] as const) {
    it(
      `builds for the ${board} within its flash and RAM (make ${board})`,
      () => {
        if (!onPath('avr-gcc') || !onPath('avr-g++') || !existsSync(arduinoCore)) throw new Error(INSTALL_AVR);
        const { status, output } = make(board);
        expect(status, output).toBe(0);
        const hex = join(firmwareDir, 'build', board, 'twolink_fw.hex');
        expect(existsSync(hex), `${hex} was not written`).toBe(true);
        expect(readFileSync(hex, 'utf8')).toMatch(/^:[0-9A-F]+\r?\n/);
        const size = new RegExp(`SIZE ${board} \\(\\w+\\): flash (\\d+) of (\\d+) bytes .*RAM (\\d+) of (\\d+) bytes`).exec(output);
        expect(size, output).not.toBeNull();
        const [flash = NaN, flashMax = NaN, ram = NaN, ramMax = NaN] = size!.slice(1, 5).map(Number);
        expect(flashMax).toBe(limits[board].flash);
        expect(ramMax).toBe(limits[board].ram);
        expect(flash).toBeGreaterThan(1000);
        expect(flash).toBeLessThan(flashMax);
        // Static RAM plus the stack peak simavr measured (~450 bytes, make sim-test) must fit.
        expect(ram + 512).toBeLessThanOrEqual(ramMax);
      },
      TIMEOUT_MS,
    );
  }

  it(
    'the Leonardo image: encoders on INT0..INT3, the sample clock on Timer3, and the USB device descriptor with 2341:8036',
    () => {
      if (!onPath('avr-gcc') || !onPath('avr-g++') || !existsSync(arduinoCore)) throw new Error(INSTALL_AVR);
      const { status, output } = make('leonardo');
      expect(status, output).toBe(0);
      const elf = join(firmwareDir, 'build', 'leonardo', 'twolink_fw.elf');
      const nm = spawnSync('avr-nm', [elf], { encoding: 'utf8' });
      const vec = (n: number): string | undefined => new RegExp(`^([0-9a-f]+) T __vector_${n}$`, 'm').exec(nm.stdout)?.[1];
      // ATmega32U4 vectors: 1..4 = INT0..INT3 (one handler), 32 = TIMER3_COMPA, 10 = USB_GEN (the CDC stack).
      expect(vec(1), nm.stdout).toBeDefined();
      for (const n of [2, 3, 4]) expect(vec(n)).toBe(vec(1));
      expect(vec(32)).toBeDefined();
      expect(vec(10)).toBeDefined();
      // The device descriptor's idVendor/idProduct, little-endian, somewhere in the image.
      const bytes: number[] = [];
      for (const line of readFileSync(join(firmwareDir, 'build', 'leonardo', 'twolink_fw.hex'), 'utf8').split(/\r?\n/)) {
        if (!line.startsWith(':') || line.slice(7, 9) !== '00') continue;
        for (let i = 9; i < 9 + 2 * parseInt(line.slice(1, 3), 16); i += 2) bytes.push(parseInt(line.slice(i, i + 2), 16));
      }
      expect(Buffer.from(bytes).includes(Buffer.from([0x41, 0x23, 0x36, 0x80]))).toBe(true);
    },
    TIMEOUT_MS,
  );

  it(
    'boots and answers the handshake in simavr, both boards (make sim-test; needs simavr libsimavr-dev)',
    () => {
      if (!hasSimavr) throw new Error('simavr is not installed: sudo apt-get install simavr libsimavr-dev (.ci/run installs it)');
      const { status, output } = make('sim-test');
      expect(status, output).toBe(0);
      expect(output).toMatch(/sim uno: \d+ checks, 0 failed/);
      expect(output).toMatch(/sim mega: \d+ checks, 0 failed/);
    },
    TIMEOUT_MS,
  );
});
