// Issue 32: `twolink rig --pty --inject NAME@T` counts T from the host's handshake (the first request for
// the board's identity it answers), not from when it starts serving: a host that a busy machine holds
// up connects late and still meets the injection T into its session. Here the host connects late on
// purpose (2 s after serving, past every injection's time); the test then waits for the rig's reports
// (events), never for a time window. Every kind of pty rig: the line mock, the Firmata mock, our
// firmware in simavr (--firmware) and the stock Firmata image in it (with TWOLINK_STOCK_FIRMATA_ELF, or
// sources to build it: src/bench/firmware-stock.ts; skipped with one line outside CI without them).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SerialPort } from 'serialport';
import { describe, expect, it, onTestFailed } from 'vitest';
import { loadRig } from '../../src/config/load.js';
import { stockFirmataElf } from '../../src/bench/firmware-stock.js';
import { parseMockReport, type MockReport } from '../../src/mock/mock-report.js';
import { BIN, ROOT } from '../helpers/cli.js';
import { closePort, sendHandshake } from '../helpers/pty-handshake.js';
import { own } from '../helpers/owned-children.js';

const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;
/** How late the host connects after the rig serves [ms]: past both injections' times. */
const LATE_MS = 2000;
const IN_CI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';
const STOCK = stockFirmataElf(ROOT);
if (STOCK.elf === undefined && !IN_CI) console.warn(`rig-inject-handshake: the stock Firmata image's case skipped: ${STOCK.why}`);

/** Each kind of pty rig: its rig file and its arguments. */
const RIGS: { name: string; rigFile: string; args: string[]; skip?: boolean }[] = [
  { name: 'the line mock', rigFile: 'rigs/mock-arm.json', args: [] },
  { name: 'the Firmata mock', rigFile: 'rigs/mock-arm-firmata.json', args: [] },
  { name: 'our firmware in simavr', rigFile: 'rigs/mock-arm.json', args: ['--firmware'] },
  {
    name: 'stock Firmata in simavr',
    rigFile: 'rigs/mock-arm-firmata-uno.json',
    args: ['--firmware', '--board', 'uno-firmata', '--elf', STOCK.elf ?? 'missing.elf'],
    skip: STOCK.elf === undefined && !IN_CI,
  },
];

describe("the pty rig's injections count from the host's handshake, not from serving", () => {
  for (const { name, rigFile, args, skip } of RIGS) {
    it.skipIf(skip)(
      `${name} (${rigFile}): a host ${LATE_MS} ms late still meets stall=2@0.5 and reset@1 0.5 s and 1 s into its session`,
      async () => {
        // How finely the rig applies them: a plant step on the mocks; on the firmware rig, a lock-step slice
        // (its default 250 us: src/mock/firmware-sim.ts), the handshake's byte arriving within one.
        const step = Math.max(loadRig(rigFile).plant!.step, args.includes('--firmware') ? 250e-6 : 0);
        const argv = [
          BIN,
          'rig',
          '--rig',
          rigFile,
          '--pty',
          '--report',
          '--no-rt',
          ...args,
          '--inject',
          'stall=2@0.5',
          '--inject',
          'reset@1',
        ];
        const rig = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        own(rig);
        let err = '';
        rig.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const reports: { r: MockReport; atMs: number }[] = [];
        onTestFailed(() =>
          console.error(
            `rig-inject-handshake, ${name}: the rig's reports:\n${reports.map((x) => JSON.stringify(x.r)).join('\n')}\n--- its stderr:\n${err}`,
          ),
        );
        let port: SerialPort | undefined;
        try {
          await new Promise<void>((resolve, reject) => {
            rig.once('exit', (code) => reject(new Error(`twolink rig exited (${code}): ${err}`)));
            let host = '';
            createInterface({ input: rig.stdout }).on('line', (line) => {
              const r = parseMockReport(line);
              reports.push({ r, atMs: monoMs() });
              if (r.kind === 'pty') host = r.host;
              else if (r.kind === 'serving') {
                // The host is late (how late it connects, not a window for a result).
                setTimeout(() => void sendHandshake(host, rigFile).then((p) => (port = p), reject), LATE_MS);
              } else if (r.kind === 'injected' && reports.filter((x) => x.r.kind === 'injected').length === 2) resolve();
            });
          });
          const kinds = reports.map((x) => x.r.kind);
          expect(kinds.slice(0, 5)).toEqual(['pty', 'serving', 'handshake', 'injected', 'injected']);
          const serving = reports[1]!.atMs;
          const handshake = reports[2]!.r as Extract<MockReport, { kind: 'handshake' }>;
          // The host came after both injections' times from serving: counted from there, both would have come before it.
          expect(handshake.monoMs - serving).toBeGreaterThanOrEqual(LATE_MS - 50);
          const [stall, reset] = reports.slice(3).map((x) => x.r) as Extract<MockReport, { kind: 'injected' }>[];
          expect([stall!.injection, reset!.injection]).toEqual(['stall=2@0.5', 'reset@1']);
          // On the arm's time from the handshake: within one plant step (slice) of 0.5 s; the board's reset not before its 1 s.
          expect(stall!.plantS).toBeGreaterThanOrEqual(0.5 - 1e-9);
          expect(stall!.plantS).toBeLessThanOrEqual(0.5 + step + 1e-9);
          expect(reset!.plantS).toBeGreaterThanOrEqual(1 - 1e-9);
          // The wall's time from the handshake too: not before each's time. (Not on the firmware rig: there the
          // rig hears of the handshake from the harness, which runs up to 40 slices ahead of it, so its wall
          // clock starts late by up to that; the board time above is the harness's own.)
          if (!args.includes('--firmware')) {
            expect(stall!.wallS).toBeGreaterThanOrEqual(0.5 - 1e-3);
            expect(reset!.wallS).toBeGreaterThanOrEqual(1 - 1e-3);
          }
          expect(err).toMatch(/twolink rig: injected stall=2@0\.5 at (the arm's|board) time 0\.5\d{3} s from the host's handshake/);
        } finally {
          await closePort(port);
          rig.kill('SIGTERM');
          await new Promise((r) => (rig.exitCode !== null ? r(undefined) : rig.once('exit', r)));
        }
      },
    );
  }
});
