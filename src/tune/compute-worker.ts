/** The worker of realtime-compute.ts: one tune job (jobs.ts) in workerData, its result posted back. */
import { parentPort, workerData } from 'node:worker_threads';
import { jobHere, type TuneJob } from './jobs.js';

const { kind, job } = workerData as TuneJob;
parentPort!.postMessage(jobHere(kind, job));
