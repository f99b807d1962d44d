// The loop behind each USB adapter model, in virtual time: at 1 kHz a 16U2 delivers samples in bursts
// (short frames about four every 4.096 ms; our ~37-byte telemetry lines about two every ~2 ms, as the
// ring passes 96 bytes); the loop learns the longer answer delay (4-5 samples), predicts over
// it with the answers already in flight, completes the reach and tracks within 1.5x of a native-USB
// board's run.
import { describe, expect, it } from 'vitest';
import { loadRig, type Rig } from '../src/config/load.js';
import type { AdapterKind } from '../src/config/cable.js';
import { builtinPath } from '../src/model/builtins.js';
import { F } from '../src/telemetry/tick.js';
import { virtualRun } from './helpers/virtual-run.js';

const rigWith = (kind: AdapterKind, rateHz: number, latencyMs = 16): Rig => {
  const r = loadRig('rigs/mock-arm.json');
  return { ...r, control: { ...r.control, rateHz }, plant: { ...r.plant!, adapter: { kind, latencyMs } } };
};
const reach = (r: Rig) => [builtinPath(r.arm, 'reach')!];
const worst = (rms: number[]) => Math.max(...rms);

describe('the loop behind each adapter (virtual time)', () => {
  it('1 kHz through the 16U2 model: the reach completes, the learned delay is 4-5 samples, tracking within 1.5x of native', async () => {
    const u2 = rigWith('16u2', 1000);
    const nat = rigWith('native', 1000);
    const a = await virtualRun(u2, reach(u2), { rateHz: 1000, keepRows: false });
    const b = await virtualRun(nat, reach(nat), { rateHz: 1000, keepRows: false });
    expect(a.summary.stop).toEqual({ kind: 'done' });
    expect(b.summary.stop).toEqual({ kind: 'done' });
    const d = a.result.timing.answerDelaySamples!;
    expect(d).toBeGreaterThanOrEqual(4);
    expect(d).toBeLessThanOrEqual(6);
    expect(b.result.timing.answerDelaySamples!).toBeLessThanOrEqual(3);
    expect(worst(a.summary.tracking.rmsDeg)).toBeLessThanOrEqual(1.5 * worst(b.summary.tracking.rmsDeg));
  });

  it('"late" is a host past its deadline: behind the 16U2 at 1 kHz three samples in four come in its bursts and are not late; a native board has next to none', async () => {
    const u2 = rigWith('16u2', 1000);
    const nat = rigWith('native', 1000);
    const a = await virtualRun(u2, reach(u2), { rateHz: 1000 });
    const b = await virtualRun(nat, reach(nat), { rateHz: 1000, keepRows: false });
    const t = a.result.timing;
    // Virtual time: the host is never late, so nothing is.
    expect(t.lateSamples).toBe(0);
    expect(t.burstSamples / t.samples).toBeGreaterThan(0.5);
    expect(b.result.timing.lateSamples).toBe(0);
    expect(b.result.timing.burstSamples / b.result.timing.samples).toBeLessThan(0.05);
    // The recording agrees: its last row's counts are the run's, and every row not answered is one of them.
    const last = a.rows.at(-1)!;
    expect([last[F.overruns], last[F.burst]]).toEqual([t.lateSamples, t.burstSamples]);
    expect(a.summary.overruns).toBe(t.lateSamples);
    expect(a.summary.burst).toBe(t.burstSamples);
  });

  it('predicting with the answers in flight beats answering the sample as it was, behind the 16U2 at 1 kHz', async () => {
    const r = rigWith('16u2', 1000);
    const withP = await virtualRun(r, reach(r), { rateHz: 1000, keepRows: false });
    const without = await virtualRun(r, reach(r), { rateHz: 1000, keepRows: false, predict: false });
    expect(withP.summary.stop).toEqual({ kind: 'done' });
    expect(worst(withP.summary.tracking.rmsDeg)).toBeLessThan(worst(without.summary.tracking.rmsDeg));
  });

  it('an FTDI at its default 16 ms at 250 Hz: samples come in bursts, the reach completes, and tracks worse than with the timer at 1 ms', async () => {
    const slow = rigWith('ftdi', 250, 16);
    const fast = rigWith('ftdi', 250, 1);
    const a = await virtualRun(slow, reach(slow), { rateHz: 250, keepRows: false });
    const b = await virtualRun(fast, reach(fast), { rateHz: 250, keepRows: false });
    expect(a.summary.stop).toEqual({ kind: 'done' });
    expect(a.result.timing.lostSamples).toBe(0);
    // Bursts of four every 16 ms: a good part of the samples are recorded and not answered, in the
    // adapter's bursts: not late (issue 35: they were counted late).
    expect(a.result.timing.burstSamples / a.result.timing.samples).toBeGreaterThan(0.4);
    expect(a.result.timing.lateSamples / a.result.timing.samples).toBeLessThan(0.02);
    expect(worst(a.summary.tracking.rmsDeg)).toBeGreaterThan(worst(b.summary.tracking.rmsDeg));
  });
});
