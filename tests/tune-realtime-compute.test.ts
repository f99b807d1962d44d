// tune's computations in real time (src/tune/realtime-compute.ts): the fit's pause sleeps once
// YIELD_AFTER_MS of work has gone by, and not before (a fake clock); the spectra computed in a worker
// thread are those computed here, to the bit; a worker that fails rejects with its error.
import { describe, expect, it } from 'vitest';
import { SLEEP_MS, slicedPause, spectraInWorker, YIELD_AFTER_MS } from '../src/tune/realtime-compute.js';
import { spectraHere, type SpectraJob } from '../src/tune/spectra-job.js';
import { logChirp } from '../src/tune/spectra.js';

describe('tune in real time: the pause and the spectra thread', () => {
  it(`pause() resolves at once until ${YIELD_AFTER_MS} ms of work, then sleeps on a timer (>= ${SLEEP_MS} ms)`, async () => {
    let t = 0;
    const pause = slicedPause(() => t);
    const order: string[] = [];
    // Under the limit: a resolved promise (a microtask), no timer.
    t = YIELD_AFTER_MS - 1;
    const quick = pause().then(() => order.push('quick'));
    setImmediate(() => order.push('immediate'));
    await quick;
    expect(order).toEqual(['quick']);
    // Over it: only after a timer, i.e. after an immediate queued now.
    t = YIELD_AFTER_MS + 1;
    const slept = pause().then(() => order.push('slept'));
    setImmediate(() => order.push('immediate 2'));
    await slept;
    expect(order.indexOf('slept')).toBeGreaterThan(order.indexOf('immediate 2'));
    // The sleep starts the count again: right after it, no sleep.
    const again = pause().then(() => order.push('again'));
    setImmediate(() => order.push('immediate 3'));
    await again;
    expect(order.at(-1)).toBe('again');
    expect(order).not.toContain('immediate 3');
  });

  it('the spectra from the worker thread equal those computed here (a chirp through a second-order plant)', async () => {
    const fs = 100;
    const n = 3000;
    const r = Array.from({ length: n }, (_, i) => logChirp(i / fs, 0.5, 20, n / fs).value);
    // u = r + a little of y fed back; y: a damped oscillator driven by u (explicit Euler, 10 ms).
    const u: number[] = [];
    const y: number[] = [];
    let p = 0;
    let v = 0;
    for (let i = 0; i < n; i++) {
      const ui = r[i]! - 0.2 * p;
      u.push(ui);
      y.push(p);
      v += (ui - 4 * p - 0.8 * v) / fs;
      p += v / fs;
    }
    const job: SpectraJob = { r, u, y, fs, nfft: 512, bands: { min: 0.5, f0: 0.5, f1: 20, perDecade: 10 } };
    const here = spectraHere(job);
    const there = await spectraInWorker(job);
    expect(here.raw.freqHz.length).toBeGreaterThan(100);
    expect(here.bands!.freqHz.length).toBeGreaterThan(5);
    expect(there).toEqual(here);
  });

  it('a job the worker cannot do rejects with its error', async () => {
    const job: SpectraJob = { r: [1, 2], u: [1, 2], y: [1], fs: 100, nfft: 512 };
    await expect(spectraInWorker(job)).rejects.toThrow(/welchH1/);
  });
});
