/**
 * The line protocol on a real serial stream: round-trip latency and frames per second over a pty to
 * the mock rig in its own process (`twolink rig --pty`), and the bytes a control cycle costs against
 * the bus limit at each baud rate.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadRig } from '../config/load.js';
import { compose } from '../run/compose.js';
import { section, type BenchResult } from './report.js';
import { UsHistogram } from '../run/stats.js';

const BIN = fileURLToPath(new URL('../../bin/twolink.js', import.meta.url));

/** Starts `twolink rig --pty` for a rig file; resolves with the host's path and a stop function. */
export function startRigProcess(rigFile: string): Promise<{ path: string; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--single-threaded-gc', BIN, 'rig', '--rig', rigFile, '--pty'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) setTimeout(() => resolve({ path: out.split('\n')[0]!.trim(), stop: () => child.kill('SIGTERM') }), 300);
    });
    child.on('exit', (c) => reject(new Error(`twolink rig exited (${c}): ${err}`)));
  });
}

export async function benchLink(): Promise<BenchResult> {
  const rigFile = 'rigs/mock-arm.json';
  const rig = loadRig(rigFile);
  const proc = await startRigProcess(rigFile);
  try {
    const c = await compose(rig, { kind: 'port', path: proc.path }, { link: { watchdogMs: 200, handshakeMs: 3000 } });
    const { clock, board: link } = c;
    await link.open();
    await link.enable(true);
    // Round trips: one M, wait for the T that acknowledges it.
    const rtt = new UsHistogram();
    const n = 2000;
    const out0 = link.counters.bytesOut;
    const in0 = link.counters.bytesIn;
    const t0 = clock.now();
    for (let k = 0; k < n; k++) {
      const start = clock.now();
      const seq = link.writeDuty([0.25, -0.25]);
      for (;;) {
        await new Promise((r) => setImmediate(r));
        const r = link.last();
        if (r && r.ack === seq) break;
        if (clock.now() - start > 0.5) throw new Error('no telemetry within 0.5 s');
      }
      rtt.add((clock.now() - start) * 1e6);
    }
    const seconds = clock.now() - t0;
    const bytesDown = (link.counters.bytesOut - out0) / n;
    const bytesUp = (link.counters.bytesIn - in0) / n;
    await link.stop();
    await link.close();
    const perCycle = Math.max(bytesUp, bytesDown);
    const limit = (baud: number): number => baud / 10 / perCycle;
    return section(
      'Line protocol on a pty (mock rig in its own process)',
      [
        ['round trip M -> T, p50', `${(rtt.quantile(0.5) / 1000).toFixed(3)} ms`, `${n} commands, one at a time`],
        ['round trip M -> T, p99', `${(rtt.quantile(0.99) / 1000).toFixed(3)} ms`, `max ${(rtt.max / 1000).toFixed(3)} ms`],
        [
          'frames per second, ack-paced',
          `${((2 * n) / seconds).toFixed(0)} /s`,
          `(${(n / seconds).toFixed(0)} control cycles/s; a pty has no baud limit)`,
        ],
        [
          'bytes per control cycle',
          `${bytesDown.toFixed(1)} down + ${bytesUp.toFixed(1)} up`,
          "measured (M and T frames with this run's numbers)",
        ],
        ['bus limit at 115200 baud', `${limit(115200).toFixed(0)} Hz`, 'the slower direction, 10 bits a byte'],
        [
          'bus limit at 1000000 baud',
          `${limit(1_000_000).toFixed(0)} Hz`,
          `rig default; a 500 Hz loop uses ${((500 / limit(1_000_000)) * 100).toFixed(0)}% of it`,
        ],
      ],
      {
        rttP50Us: rtt.quantile(0.5),
        rttP99Us: rtt.quantile(0.99),
        cyclesPerS: n / seconds,
        bytesDown,
        bytesUp,
        limit115200Hz: limit(115200),
        limit1MHz: limit(1_000_000),
      },
    );
  } finally {
    proc.stop();
  }
}
