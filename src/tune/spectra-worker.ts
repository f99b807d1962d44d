/** The worker of realtime-compute.ts: one spectra job (spectra-job.ts) in workerData, its result posted back. */
import { parentPort, workerData } from 'node:worker_threads';
import { spectraHere, type SpectraJob } from './spectra-job.js';

parentPort!.postMessage(spectraHere(workerData as SpectraJob));
