/**
 * tune's spectra as jobs a thread can be given: the plain data in, the response out. In real time
 * (tune on a port, or the mock in its own thread) they run in a worker thread (realtime-compute.ts), so
 * that the thread answering the board's samples is never busy with them; in virtual time, here.
 */
import { closedLoopResponse, sweptBands, type FrequencyResponse } from './spectra.js';

/** The closed-loop response of a record (spectra.ts closedLoopResponse), and with `bands` its swept-sine bands (sweptBands) too. */
export interface SpectraJob {
  r: readonly number[];
  u: readonly number[];
  y: readonly number[];
  /** Sample rate [Hz] and Welch's segment length. */
  fs: number;
  nfft: number;
  bands?: { min: number; f0: number; f1: number; perDecade: number };
}

export interface SpectraResult {
  raw: FrequencyResponse;
  bands?: FrequencyResponse;
}

/** The job's spectra, on this thread. */
export function spectraHere(job: SpectraJob): SpectraResult {
  const raw = closedLoopResponse(job.r, job.u, job.y, job.fs, job.nfft);
  if (!job.bands) return { raw };
  const b = job.bands;
  return { raw, bands: sweptBands(job.r, job.u, job.y, job.fs, raw, b.min, b.f0, b.f1, b.perDecade) };
}
