/**
 * tune's long computations as jobs a thread can be given: plain data in, plain data out. In real time
 * (tune on a port, or the mock in its own thread) they run in a worker thread at normal priority
 * (realtime-compute.ts, compute-worker.ts); in virtual time, here.
 */
import { preflightOnModel, type PreflightJob } from './design.js';
import { fitCoupled, type FitJob, type FitResult } from './joint-model.js';
import { spectraHere, type SpectraJob, type SpectraResult } from './spectra-job.js';

/** A job and what it answers. */
export interface TuneJobs {
  spectra: { job: SpectraJob; result: SpectraResult };
  fit: { job: FitJob; result: FitResult };
  preflight: { job: PreflightJob; result: ReturnType<typeof preflightOnModel> };
}

export type TuneJobKind = keyof TuneJobs;

/** What a worker is given: the kind and its job. */
export type TuneJob = { [K in TuneJobKind]: { kind: K; job: TuneJobs[K]['job'] } }[TuneJobKind];

/** The job, on this thread. */
export function jobHere<K extends TuneJobKind>(kind: K, job: TuneJobs[K]['job']): TuneJobs[K]['result'] {
  const run: { [P in TuneJobKind]: (j: TuneJobs[P]['job']) => TuneJobs[P]['result'] } = {
    spectra: spectraHere,
    fit: fitCoupled,
    preflight: preflightOnModel,
  };
  return run[kind](job);
}
