// tune's long computations in real time (src/tune/realtime-compute.ts): each runs in a worker thread
// and answers what it answers here, to the bit (the spectra, the model's fit, the preflight); the fit
// finds the mass scale, friction and delay a response was made with; a worker that fails rejects with
// its error.
import { describe, expect, it } from 'vitest';
import { preflightOnModel, type PreflightJob } from '../src/tune/design.js';
import { coupledResponse, estimatorResponse, fitCoupled, scaledModel, type CoupledModel, type FitJob } from '../src/tune/joint-model.js';
import { inWorker } from '../src/tune/realtime-compute.js';
import { spectraHere, type SpectraJob } from '../src/tune/spectra-job.js';
import { logChirp } from '../src/tune/spectra.js';

/** A two-joint model like rigs/mock-arm.json's at elbow 0 (kg m^2, N m/rad, N m s/rad), a 6 ms delay. */
const NOMINAL: CoupledModel = {
  M: [
    [0.092, 0.02],
    [0.02, 0.0085],
  ],
  K: [
    [0, 0],
    [0, 0],
  ],
  b: [0, 0],
  B: [0.01, 0.004],
  delayS: 0.006,
};

/** A response made with the model scaled (mass 1.3, b 0.1, delay 7 ms) on joint 1, the other held by a PD. */
function fitJobFor(): FitJob {
  const dt = 1 / 500;
  const freqHz = Array.from({ length: 24 }, (_, i) => 1.5 * Math.pow(20 / 1.5, i / 23));
  const ws = freqHz.map((f) => 2 * Math.PI * f);
  const Vs = ws.map((w) => estimatorResponse(w, 25, dt));
  const Chs = ws.map((_, i): [number, number] => [5 + 0.2 * Vs[i]![0], 0.2 * Vs[i]![1]]);
  const truth = scaledModel(NOMINAL, 0, 1.3, 0.1, 0.007);
  return {
    nominal: NOMINAL,
    j: 0,
    freqHz,
    P: ws.map((w, i) => coupledResponse(truth, 0, w, Vs[i]!, Chs[i]!)),
    coherence: freqHz.map(() => 0.95),
    delays: Array.from({ length: 40 }, (_, i) => (0.5 + 0.1 * i) * dt),
    Vs,
    Chs,
  };
}

describe('tune in real time: the long computations in a worker thread', () => {
  it('the fit finds the mass scale, the friction and the delay the response was made with', () => {
    const fit = fitCoupled(fitJobFor());
    expect(fit.mass).toBeCloseTo(1.3, 2);
    expect(fit.b).toBeCloseTo(0.1, 2);
    expect(fit.model.delayS * 1000).toBeCloseTo(7, 1);
    expect(fit.cost).toBeLessThan(1e-3);
  });

  it('the fit and the preflight from a worker thread equal those computed here', async () => {
    const job = fitJobFor();
    expect(await inWorker('fit', job)).toEqual(fitCoupled(job));
    const pre: PreflightJob = { model: NOMINAL, targetHz: 4.8, dt: 1 / 500, floorHz: 25, widen: false, alpha: 20 };
    const here = preflightOnModel(pre);
    expect('refused' in here).toBe(false);
    expect(await inWorker('preflight', pre)).toEqual(here);
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
    const there = await inWorker('spectra', job);
    expect(here.raw.freqHz.length).toBeGreaterThan(100);
    expect(here.bands!.freqHz.length).toBeGreaterThan(5);
    expect(there).toEqual(here);
  });

  it('a job the worker cannot do rejects with its error', async () => {
    const job: SpectraJob = { r: [1, 2], u: [1, 2], y: [1], fs: 100, nfft: 512 };
    await expect(inWorker('spectra', job)).rejects.toThrow(/welchH1/);
  });
});
