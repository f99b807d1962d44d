/** The recording writer lives in src/telemetry/recorder.ts (below the run that uses it); re-exported for record's users. */
export * from '../telemetry/recorder.js';
