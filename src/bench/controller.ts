/**
 * What running a user's controller in its own thread costs the loop (src/run/controller-thread.ts):
 * the round trip of one tick (sample into the shared buffer, Atomics.notify, the controller's update,
 * Atomics.wait for the torques) against calling the same controller in the loop's thread. Back to
 * back (the thread is awake), and paced at 1 kHz (the thread sleeps in Atomics.wait between ticks,
 * as in a run: each tick pays a wake-up). Real time; the machine's load is printed with the figures.
 */
import { loadRig } from '../config/load.js';
import { controllerContext, PluggedController } from '../control/user-controller.js';
import type { LawSample } from '../control/loop.js';
import { ControllerThread } from '../run/controller-thread.js';
import { load1, section, type BenchResult } from './report.js';

const FILE = 'examples/controllers/pd-gravity.js';

function quantiles(us: number[]): { p50: number; p99: number; max: number } {
  const s = us.slice().sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1]! };
}

const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `n` calls of `step`, paced every `paceMs` (0: back to back); each call's time [us] and the CPU of the process over them [% of a core]. */
async function time(step: () => void, n: number, paceMs: number): Promise<{ us: number[]; cpuPct: number }> {
  const us: number[] = [];
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < n; i++) {
    if (paceMs > 0) await sleepMs(paceMs);
    const t0 = performance.now();
    step();
    us.push((performance.now() - t0) * 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  return { us, cpuPct: (100 * (cpu.user + cpu.system)) / 1000 / (performance.now() - w0) };
}

export async function benchController(): Promise<BenchResult> {
  const rig = loadRig('rigs/mock-arm.json');
  const rateHz = 1000;
  const sample: LawSample = { t: 0, q: [-1.2, 0.3], qd: [0.1, -0.2], qDesired: [-1.1, 0.35], qdDesired: [0.2, 0], qddDesired: [0, 0] };
  const out = [0, 0];
  const thread = await ControllerThread.start(FILE, rig, rateHz, { deadlineMs: 1000 });
  const inThread = await PluggedController.load(FILE, controllerContext(rig, rateHz));
  const load = load1().toFixed(2);
  try {
    await time(() => thread.step(sample, 1 / rateHz, out), 2000, 0); // warm-up
    const hot = await time(() => thread.step(sample, 1 / rateHz, out), 20_000, 0);
    const paced = await time(() => thread.step(sample, 1 / rateHz, out), 3000, 1);
    const own = await time(
      () =>
        inThread.step(
          inThread.fill(sample.t, sample.q, sample.qd, { q: sample.qDesired, qd: sample.qdDesired, qdd: sample.qddDesired }),
          1 / rateHz,
          out,
        ),
      3000,
      1,
    );
    const h = quantiles(hot.us);
    const p = quantiles(paced.us);
    const o = quantiles(own.us);
    const f = (x: number): string => x.toFixed(1);
    return section(
      `user controller in its own thread (${FILE}, real time, load ${load})`,
      [
        ['round trip, back to back', `${f(h.p50)} us`, `p99 ${f(h.p99)} us, max ${f(h.max)} us (${hot.us.length} calls)`],
        [
          'round trip, paced at 1 kHz',
          `${f(p.p50)} us`,
          `p99 ${f(p.p99)} us, max ${f(p.max)} us; process CPU ${f(paced.cpuPct)} % of a core`,
        ],
        [
          'same law in the loop thread, 1 kHz',
          `${f(o.p50)} us`,
          `p99 ${f(o.p99)} us, max ${f(o.max)} us; process CPU ${f(own.cpuPct)} % of a core`,
        ],
      ],
      {
        loadAvg1: Number(load),
        hotP50Us: h.p50,
        hotP99Us: h.p99,
        pacedP50Us: p.p50,
        pacedP99Us: p.p99,
        pacedMaxUs: p.max,
        pacedCpuPct: paced.cpuPct,
        inThreadP50Us: o.p50,
        inThreadP99Us: o.p99,
        inThreadCpuPct: own.cpuPct,
      },
    );
  } finally {
    void thread.close();
  }
}
